build-tsan/src/kernels/nn_dispatch.o: src/kernels/nn_dispatch.c \
 src/kernels/nn_variants.h src/kernels/nn_kernels.h include/varprof/isa.h \
 include/varprof/status.h
src/kernels/nn_variants.h:
src/kernels/nn_kernels.h:
include/varprof/isa.h:
include/varprof/status.h:
