build-tsan/tests/support/reference.o: tests/support/reference.c \
 tests/support/reference.h
tests/support/reference.h:
