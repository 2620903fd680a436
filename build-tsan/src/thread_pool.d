build-tsan/src/thread_pool.o: src/thread_pool.c src/thread_pool.h \
 include/varprof/status.h
src/thread_pool.h:
include/varprof/status.h:
