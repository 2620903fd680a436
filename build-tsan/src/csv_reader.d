build-tsan/src/csv_reader.o: src/csv_reader.c src/csv_reader.h \
 include/varprof/status.h
src/csv_reader.h:
include/varprof/status.h:
