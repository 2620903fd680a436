build-tsan/src/gains_file.o: src/gains_file.c \
 include/varprof/gains_file.h include/varprof/status.h src/csv_reader.h \
 include/varprof/parse.h
include/varprof/gains_file.h:
include/varprof/status.h:
src/csv_reader.h:
include/varprof/parse.h:
