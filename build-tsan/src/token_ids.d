build-tsan/src/token_ids.o: src/token_ids.c include/varprof/token_ids.h \
 include/varprof/status.h src/csv_reader.h include/varprof/parse.h
include/varprof/token_ids.h:
include/varprof/status.h:
src/csv_reader.h:
include/varprof/parse.h:
