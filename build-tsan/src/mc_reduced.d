build-tsan/src/mc_reduced.o: src/mc_reduced.c src/mc_internal.h \
 src/kernels/mc_loops.h include/varprof/isa.h include/varprof/status.h \
 src/mc_step.h include/varprof/config.h include/varprof/placement.h \
 include/varprof/profile.h include/varprof/mc.h include/varprof/gauss.h
src/mc_internal.h:
src/kernels/mc_loops.h:
include/varprof/isa.h:
include/varprof/status.h:
src/mc_step.h:
include/varprof/config.h:
include/varprof/placement.h:
include/varprof/profile.h:
include/varprof/mc.h:
include/varprof/gauss.h:
