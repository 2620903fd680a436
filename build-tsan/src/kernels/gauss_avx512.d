build-tsan/src/kernels/gauss_avx512.o: src/kernels/gauss_avx512.c \
 src/kernels/gauss_internal.h
src/kernels/gauss_internal.h:
