build-tsan/src/cli/stack_options.o: src/cli/stack_options.c \
 src/cli/commands.h src/cli/options.h include/varprof/config.h \
 include/varprof/placement.h include/varprof/status.h \
 include/varprof/forward.h include/varprof/profile.h include/varprof/mc.h \
 include/varprof/models.h
src/cli/commands.h:
src/cli/options.h:
include/varprof/config.h:
include/varprof/placement.h:
include/varprof/status.h:
include/varprof/forward.h:
include/varprof/profile.h:
include/varprof/mc.h:
include/varprof/models.h:
