build-tsan/src/safetensors.o: src/safetensors.c \
 include/varprof/safetensors.h include/varprof/status.h
include/varprof/safetensors.h:
include/varprof/status.h:
