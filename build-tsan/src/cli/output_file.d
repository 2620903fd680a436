build-tsan/src/cli/output_file.o: src/cli/output_file.c \
 src/cli/output_file.h src/cli/options.h include/varprof/cleanup.h
src/cli/output_file.h:
src/cli/options.h:
include/varprof/cleanup.h:
