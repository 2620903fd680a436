build-tsan/src/kernels/isa.o: src/kernels/isa.c \
 src/kernels/gauss_internal.h include/varprof/gauss.h \
 include/varprof/isa.h include/varprof/status.h
src/kernels/gauss_internal.h:
include/varprof/gauss.h:
include/varprof/isa.h:
include/varprof/status.h:
