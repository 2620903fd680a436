build-tsan/src/text_writer.o: src/text_writer.c include/varprof/compare.h \
 include/varprof/profile.h include/varprof/config.h \
 include/varprof/placement.h include/varprof/status.h \
 include/varprof/format.h include/varprof/text.h \
 include/varprof/version.h
include/varprof/compare.h:
include/varprof/profile.h:
include/varprof/config.h:
include/varprof/placement.h:
include/varprof/status.h:
include/varprof/format.h:
include/varprof/text.h:
include/varprof/version.h:
