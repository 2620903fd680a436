build-tsan/src/figures.o: src/figures.c include/varprof/figures.h \
 include/varprof/status.h include/varprof/closed.h \
 include/varprof/config.h include/varprof/placement.h \
 include/varprof/profile.h include/varprof/forward.h include/varprof/mc.h \
 include/varprof/plot.h
include/varprof/figures.h:
include/varprof/status.h:
include/varprof/closed.h:
include/varprof/config.h:
include/varprof/placement.h:
include/varprof/profile.h:
include/varprof/forward.h:
include/varprof/mc.h:
include/varprof/plot.h:
