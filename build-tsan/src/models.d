build-tsan/src/models.o: src/models.c include/varprof/models.h \
 include/varprof/placement.h include/varprof/status.h \
 include/varprof/profile.h include/varprof/config.h src/csv_reader.h \
 include/varprof/parse.h
include/varprof/models.h:
include/varprof/placement.h:
include/varprof/status.h:
include/varprof/profile.h:
include/varprof/config.h:
src/csv_reader.h:
include/varprof/parse.h:
