build-tsan/src/kernels/gauss_scalar.o: src/kernels/gauss_scalar.c \
 src/kernels/gauss_internal.h
src/kernels/gauss_internal.h:
