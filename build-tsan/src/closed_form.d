build-tsan/src/closed_form.o: src/closed_form.c include/varprof/closed.h \
 include/varprof/config.h include/varprof/placement.h \
 include/varprof/status.h include/varprof/profile.h
include/varprof/closed.h:
include/varprof/config.h:
include/varprof/placement.h:
include/varprof/status.h:
include/varprof/profile.h:
