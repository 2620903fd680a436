build-tsan/src/parse.o: src/parse.c include/varprof/parse.h \
 include/varprof/status.h
include/varprof/parse.h:
include/varprof/status.h:
