build-tsan/src/plot_quote.o: src/plot_quote.c include/varprof/plot.h \
 include/varprof/placement.h include/varprof/status.h \
 include/varprof/profile.h include/varprof/config.h
include/varprof/plot.h:
include/varprof/placement.h:
include/varprof/status.h:
include/varprof/profile.h:
include/varprof/config.h:
