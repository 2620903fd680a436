build-tsan/src/mc.o: src/mc.c include/varprof/mc.h \
 include/varprof/config.h include/varprof/placement.h \
 include/varprof/status.h include/varprof/profile.h src/mc_internal.h \
 src/kernels/mc_loops.h include/varprof/isa.h src/mc_step.h
include/varprof/mc.h:
include/varprof/config.h:
include/varprof/placement.h:
include/varprof/status.h:
include/varprof/profile.h:
src/mc_internal.h:
src/kernels/mc_loops.h:
include/varprof/isa.h:
src/mc_step.h:
