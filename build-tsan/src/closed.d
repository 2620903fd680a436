build-tsan/src/closed.o: src/closed.c include/varprof/closed.h \
 include/varprof/config.h include/varprof/placement.h \
 include/varprof/status.h include/varprof/profile.h src/scaled.h
include/varprof/closed.h:
include/varprof/config.h:
include/varprof/placement.h:
include/varprof/status.h:
include/varprof/profile.h:
src/scaled.h:
