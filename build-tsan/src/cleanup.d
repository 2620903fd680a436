build-tsan/src/cleanup.o: src/cleanup.c include/varprof/cleanup.h
include/varprof/cleanup.h:
