build-tsan/src/cli/figures_cmd.o: src/cli/figures_cmd.c \
 src/cli/commands.h src/cli/options.h include/varprof/config.h \
 include/varprof/placement.h include/varprof/status.h \
 include/varprof/forward.h include/varprof/profile.h include/varprof/mc.h \
 include/varprof/models.h include/varprof/figures.h \
 include/varprof/plot.h
src/cli/commands.h:
src/cli/options.h:
include/varprof/config.h:
include/varprof/placement.h:
include/varprof/status.h:
include/varprof/forward.h:
include/varprof/profile.h:
include/varprof/mc.h:
include/varprof/models.h:
include/varprof/figures.h:
include/varprof/plot.h:
