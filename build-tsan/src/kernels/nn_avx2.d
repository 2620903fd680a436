build-tsan/src/kernels/nn_avx2.o: src/kernels/nn_avx2.c \
 src/kernels/nn_internal.h src/kernels/nn_variants.h \
 src/kernels/nn_kernels.h include/varprof/isa.h include/varprof/status.h
src/kernels/nn_internal.h:
src/kernels/nn_variants.h:
src/kernels/nn_kernels.h:
include/varprof/isa.h:
include/varprof/status.h:
