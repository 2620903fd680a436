build-tsan/tests/support/run_program.o: tests/support/run_program.c \
 tests/support/run_program.h
tests/support/run_program.h:
