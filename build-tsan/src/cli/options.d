build-tsan/src/cli/options.o: src/cli/options.c src/cli/options.h \
 include/varprof/parse.h include/varprof/status.h
src/cli/options.h:
include/varprof/parse.h:
include/varprof/status.h:
