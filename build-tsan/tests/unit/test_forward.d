build-tsan/tests/unit/test_forward.o: tests/unit/test_forward.c \
 src/csv_reader.h include/varprof/status.h tests/support/run_program.h \
 include/varprof/varprof.h include/varprof/closed.h \
 include/varprof/config.h include/varprof/placement.h \
 include/varprof/profile.h include/varprof/csv.h include/varprof/format.h \
 include/varprof/forward.h include/varprof/gains_file.h \
 include/varprof/json.h include/varprof/mc.h include/varprof/compare.h \
 include/varprof/models.h include/varprof/parse.h \
 include/varprof/safetensors.h include/varprof/text.h \
 include/varprof/token_ids.h include/varprof/version.h
src/csv_reader.h:
include/varprof/status.h:
tests/support/run_program.h:
include/varprof/varprof.h:
include/varprof/closed.h:
include/varprof/config.h:
include/varprof/placement.h:
include/varprof/profile.h:
include/varprof/csv.h:
include/varprof/format.h:
include/varprof/forward.h:
include/varprof/gains_file.h:
include/varprof/json.h:
include/varprof/mc.h:
include/varprof/compare.h:
include/varprof/models.h:
include/varprof/parse.h:
include/varprof/safetensors.h:
include/varprof/text.h:
include/varprof/token_ids.h:
include/varprof/version.h:
