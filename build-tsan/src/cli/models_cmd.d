build-tsan/src/cli/models_cmd.o: src/cli/models_cmd.c src/cli/commands.h \
 src/cli/options.h include/varprof/config.h include/varprof/placement.h \
 include/varprof/status.h include/varprof/forward.h \
 include/varprof/profile.h include/varprof/mc.h include/varprof/models.h
src/cli/commands.h:
src/cli/options.h:
include/varprof/config.h:
include/varprof/placement.h:
include/varprof/status.h:
include/varprof/forward.h:
include/varprof/profile.h:
include/varprof/mc.h:
include/varprof/models.h:
