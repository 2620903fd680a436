build-tsan/src/placement.o: src/placement.c include/varprof/placement.h \
 include/varprof/status.h
include/varprof/placement.h:
include/varprof/status.h:
