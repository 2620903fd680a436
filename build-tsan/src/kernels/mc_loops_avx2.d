build-tsan/src/kernels/mc_loops_avx2.o: src/kernels/mc_loops_avx2.c \
 src/kernels/mc_loops_body.h src/kernels/mc_loops.h include/varprof/isa.h \
 include/varprof/status.h
src/kernels/mc_loops_body.h:
src/kernels/mc_loops.h:
include/varprof/isa.h:
include/varprof/status.h:
