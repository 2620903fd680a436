build-tsan/src/compare.o: src/compare.c include/varprof/compare.h \
 include/varprof/profile.h include/varprof/config.h \
 include/varprof/placement.h include/varprof/status.h
include/varprof/compare.h:
include/varprof/profile.h:
include/varprof/config.h:
include/varprof/placement.h:
include/varprof/status.h:
