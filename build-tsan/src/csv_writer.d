build-tsan/src/csv_writer.o: src/csv_writer.c include/varprof/csv.h \
 include/varprof/profile.h include/varprof/config.h \
 include/varprof/placement.h include/varprof/status.h
include/varprof/csv.h:
include/varprof/profile.h:
include/varprof/config.h:
include/varprof/placement.h:
include/varprof/status.h:
