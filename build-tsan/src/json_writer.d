build-tsan/src/json_writer.o: src/json_writer.c include/varprof/json.h \
 include/varprof/profile.h include/varprof/config.h \
 include/varprof/placement.h include/varprof/status.h \
 include/varprof/version.h
include/varprof/json.h:
include/varprof/profile.h:
include/varprof/config.h:
include/varprof/placement.h:
include/varprof/status.h:
include/varprof/version.h:
