build-tsan/src/kernels/matmul_avx2.o: src/kernels/matmul_avx2.c \
 src/kernels/matmul_internal.h src/kernels/nn_variants.h \
 src/kernels/nn_kernels.h include/varprof/isa.h include/varprof/status.h
src/kernels/matmul_internal.h:
src/kernels/nn_variants.h:
src/kernels/nn_kernels.h:
include/varprof/isa.h:
include/varprof/status.h:
