build-tsan/src/forward_model.o: src/forward_model.c src/forward_model.h \
 src/kernels/nn_kernels.h include/varprof/isa.h include/varprof/status.h \
 include/varprof/forward.h include/varprof/config.h \
 include/varprof/placement.h include/varprof/profile.h \
 include/varprof/safetensors.h include/varprof/closed.h \
 include/varprof/gauss.h
src/forward_model.h:
src/kernels/nn_kernels.h:
include/varprof/isa.h:
include/varprof/status.h:
include/varprof/forward.h:
include/varprof/config.h:
include/varprof/placement.h:
include/varprof/profile.h:
include/varprof/safetensors.h:
include/varprof/closed.h:
include/varprof/gauss.h:
