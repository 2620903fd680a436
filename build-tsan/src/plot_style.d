build-tsan/src/plot_style.o: src/plot_style.c include/varprof/plot.h \
 include/varprof/placement.h include/varprof/status.h \
 include/varprof/profile.h include/varprof/config.h
include/varprof/plot.h:
include/varprof/placement.h:
include/varprof/status.h:
include/varprof/profile.h:
include/varprof/config.h:
