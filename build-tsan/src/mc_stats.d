build-tsan/src/mc_stats.o: src/mc_stats.c src/mc_internal.h \
 src/kernels/mc_loops.h include/varprof/isa.h include/varprof/status.h \
 src/mc_step.h include/varprof/config.h include/varprof/placement.h \
 include/varprof/profile.h include/varprof/mc.h src/quantile.h
src/mc_internal.h:
src/kernels/mc_loops.h:
include/varprof/isa.h:
include/varprof/status.h:
src/mc_step.h:
include/varprof/config.h:
include/varprof/placement.h:
include/varprof/profile.h:
include/varprof/mc.h:
src/quantile.h:
