build-tsan/src/forward_run.o: src/forward_run.c src/forward_model.h \
 src/kernels/nn_kernels.h include/varprof/isa.h include/varprof/status.h \
 include/varprof/forward.h include/varprof/config.h \
 include/varprof/placement.h include/varprof/profile.h \
 include/varprof/safetensors.h src/thread_pool.h
src/forward_model.h:
src/kernels/nn_kernels.h:
include/varprof/isa.h:
include/varprof/status.h:
include/varprof/forward.h:
include/varprof/config.h:
include/varprof/placement.h:
include/varprof/profile.h:
include/varprof/safetensors.h:
src/thread_pool.h:
