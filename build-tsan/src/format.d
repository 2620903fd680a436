build-tsan/src/format.o: src/format.c include/varprof/format.h
include/varprof/format.h:
