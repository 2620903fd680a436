build-tsan/src/kernels/nn_scalar.o: src/kernels/nn_scalar.c \
 src/kernels/nn_internal.h src/kernels/nn_variants.h \
 src/kernels/nn_kernels.h include/varprof/isa.h include/varprof/status.h
src/kernels/nn_internal.h:
src/kernels/nn_variants.h:
src/kernels/nn_kernels.h:
include/varprof/isa.h:
include/varprof/status.h:
