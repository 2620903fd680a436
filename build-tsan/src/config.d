build-tsan/src/config.o: src/config.c include/varprof/config.h \
 include/varprof/placement.h include/varprof/status.h
include/varprof/config.h:
include/varprof/placement.h:
include/varprof/status.h:
