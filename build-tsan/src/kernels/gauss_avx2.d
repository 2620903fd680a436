build-tsan/src/kernels/gauss_avx2.o: src/kernels/gauss_avx2.c \
 src/kernels/gauss_internal.h
src/kernels/gauss_internal.h:
