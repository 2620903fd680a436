build-tsan/src/cli/table_cmd.o: src/cli/table_cmd.c src/cli/commands.h \
 src/cli/options.h include/varprof/config.h include/varprof/placement.h \
 include/varprof/status.h include/varprof/forward.h \
 include/varprof/profile.h include/varprof/mc.h include/varprof/models.h \
 include/varprof/varprof.h include/varprof/closed.h include/varprof/csv.h \
 include/varprof/format.h include/varprof/gains_file.h \
 include/varprof/json.h include/varprof/compare.h include/varprof/parse.h \
 include/varprof/safetensors.h include/varprof/text.h \
 include/varprof/token_ids.h include/varprof/version.h
src/cli/commands.h:
src/cli/options.h:
include/varprof/config.h:
include/varprof/placement.h:
include/varprof/status.h:
include/varprof/forward.h:
include/varprof/profile.h:
include/varprof/mc.h:
include/varprof/models.h:
include/varprof/varprof.h:
include/varprof/closed.h:
include/varprof/csv.h:
include/varprof/format.h:
include/varprof/gains_file.h:
include/varprof/json.h:
include/varprof/compare.h:
include/varprof/parse.h:
include/varprof/safetensors.h:
include/varprof/text.h:
include/varprof/token_ids.h:
include/varprof/version.h:
