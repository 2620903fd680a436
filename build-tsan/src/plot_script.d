build-tsan/src/plot_script.o: src/plot_script.c include/varprof/plot.h \
 include/varprof/placement.h include/varprof/status.h \
 include/varprof/profile.h include/varprof/config.h \
 include/varprof/version.h
include/varprof/plot.h:
include/varprof/placement.h:
include/varprof/status.h:
include/varprof/profile.h:
include/varprof/config.h:
include/varprof/version.h:
