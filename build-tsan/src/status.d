build-tsan/src/status.o: src/status.c include/varprof/status.h
include/varprof/status.h:
