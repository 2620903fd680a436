build-tsan/src/forward_load.o: src/forward_load.c src/forward_model.h \
 src/kernels/nn_kernels.h include/varprof/isa.h include/varprof/status.h \
 include/varprof/forward.h include/varprof/config.h \
 include/varprof/placement.h include/varprof/profile.h \
 include/varprof/safetensors.h
src/forward_model.h:
src/kernels/nn_kernels.h:
include/varprof/isa.h:
include/varprof/status.h:
include/varprof/forward.h:
include/varprof/config.h:
include/varprof/placement.h:
include/varprof/profile.h:
include/varprof/safetensors.h:
