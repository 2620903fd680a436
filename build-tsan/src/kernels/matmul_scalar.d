build-tsan/src/kernels/matmul_scalar.o: src/kernels/matmul_scalar.c \
 src/kernels/nn_variants.h src/kernels/nn_kernels.h include/varprof/isa.h \
 include/varprof/status.h
src/kernels/nn_variants.h:
src/kernels/nn_kernels.h:
include/varprof/isa.h:
include/varprof/status.h:
