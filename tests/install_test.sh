#!/bin/sh
# make install and make uninstall into a scratch DESTDIR: every file lands
# where it should, the manual carries the version, and uninstall removes all.
set -eu
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
make -s install DESTDIR="$dest" PREFIX=/opt/vp >/dev/null
for f in bin/varprof lib/libvarprof.a include/varprof/varprof.h include/varprof/closed.h \
         share/man/man1/varprof.1 share/man/man7/varprof-maths.7 share/varprof/models.csv; do
    [ -f "$dest/opt/vp/$f" ] || { echo "install: missing $f"; exit 1; }
done
version=$(sed -n 's/^#define VP_VERSION "\(.*\)"/\1/p' include/varprof/version.h)
grep -q "$version" "$dest/opt/vp/share/man/man1/varprof.1" || { echo "install: man page lacks version $version"; exit 1; }
! grep -q '@VERSION@' "$dest/opt/vp/share/man/man1/varprof.1" || { echo "install: @VERSION@ left in the man page"; exit 1; }
grep -q "$version" "$dest/opt/vp/share/man/man7/varprof-maths.7" || { echo "install: varprof-maths(7) lacks version $version"; exit 1; }
! grep -q '@VERSION@' "$dest/opt/vp/share/man/man7/varprof-maths.7" || { echo "install: @VERSION@ left in varprof-maths(7)"; exit 1; }
"$dest/opt/vp/bin/varprof" --version | grep -q "$version"
# the installed program finds its models table beside it
"$dest/opt/vp/bin/varprof" models | grep -q gemma-2-27b
make -s uninstall DESTDIR="$dest" PREFIX=/opt/vp >/dev/null
left=$(find "$dest/opt/vp" -type f | wc -l)
[ "$left" -eq 0 ] || { echo "uninstall: $left files left"; find "$dest/opt/vp" -type f; exit 1; }
echo "install test: 1 passed, 0 failed"
