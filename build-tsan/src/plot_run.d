build-tsan/src/plot_run.o: src/plot_run.c include/varprof/cleanup.h \
 include/varprof/plot.h include/varprof/placement.h \
 include/varprof/status.h include/varprof/profile.h \
 include/varprof/config.h
include/varprof/cleanup.h:
include/varprof/plot.h:
include/varprof/placement.h:
include/varprof/status.h:
include/varprof/profile.h:
include/varprof/config.h:
