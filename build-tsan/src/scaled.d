build-tsan/src/scaled.o: src/scaled.c src/scaled.h
src/scaled.h:
