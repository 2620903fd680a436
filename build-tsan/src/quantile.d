build-tsan/src/quantile.o: src/quantile.c src/quantile.h
src/quantile.h:
