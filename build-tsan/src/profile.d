build-tsan/src/profile.o: src/profile.c include/varprof/profile.h \
 include/varprof/config.h include/varprof/placement.h \
 include/varprof/status.h
include/varprof/profile.h:
include/varprof/config.h:
include/varprof/placement.h:
include/varprof/status.h:
