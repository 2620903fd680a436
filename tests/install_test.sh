#!/bin/sh
# make install and make uninstall into a scratch DESTDIR: every file lands
# where it should, the manual pages carry version.h's version (in the tree
# too, so that man -l shows it), a program builds against the installed
# headers and library through pkg-config alone, the installed headers name
# nothing that is not installed, and uninstall removes all.
set -eu
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
make -s install DESTDIR="$dest" PREFIX=/opt/vp >/dev/null
for f in bin/varprof lib/libvarprof.a lib/pkgconfig/varprof.pc include/varprof/varprof.h \
         include/varprof/closed.h share/man/man1/varprof.1 share/man/man7/varprof-maths.7 \
         share/varprof/models.csv; do
    [ -f "$dest/opt/vp/$f" ] || { echo "install: missing $f"; exit 1; }
done
version=$(sed -n 's/^#define VP_VERSION "\(.*\)"/\1/p' include/varprof/version.h)
for page in man/varprof.1 man/varprof-maths.7 "$dest/opt/vp/share/man/man1/varprof.1" \
            "$dest/opt/vp/share/man/man7/varprof-maths.7"; do
    grep -q "^\.TH .*\"varprof $version\"" "$page" ||
        { echo "install: $page: its .TH line does not carry version $version"; exit 1; }
done
"$dest/opt/vp/bin/varprof" --version | grep -q "$version"
# the installed program finds its models table beside it
"$dest/opt/vp/bin/varprof" models | grep -q gemma-2-27b

# the installed headers include only each other and name no file of the tree
if grep -n -e 'src/' -e 'tests/' -e '#include "[^v]' "$dest"/opt/vp/include/varprof/*.h; then
    echo "install: an installed header refers to the source tree"
    exit 1
fi
# a program built from the installed tree alone, as a user of the library would
cat > "$dest/use.c" <<'PROGRAM'
#include <stdio.h>
#include <varprof/varprof.h>
int main(void)
{
    vp_config cfg;
    vp_config_init(&cfg, VP_PRE_NORM, 32);
    vp_profile *profile = NULL;
    if (vp_closed_profile(&cfg, &profile, NULL) != VP_OK)
        return 1;
    printf("%s %.4g\n", VP_VERSION, vp_profile_stream_size(profile, profile->n_rows - 1));
    vp_profile_free(profile);
    return 0;
}
PROGRAM
flags=$(PKG_CONFIG_PATH="$dest/opt/vp/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$dest" \
        pkg-config --cflags --libs varprof)
# shellcheck disable=SC2086 # the flags are words
${CC:-cc} -std=c11 -Wall -Werror -o "$dest/use" "$dest/use.c" $flags
printed=$("$dest/use")
# sqrt(65) = 8.062: the 32-layer pre-norm stack's size, from the installed library
[ "$printed" = "$version 8.062" ] || { echo "install: the pkg-config program printed '$printed'"; exit 1; }

make -s uninstall DESTDIR="$dest" PREFIX=/opt/vp >/dev/null
left=$(find "$dest/opt/vp" -type f | wc -l)
[ "$left" -eq 0 ] || { echo "uninstall: $left files left"; find "$dest/opt/vp" -type f; exit 1; }
echo "install test: 1 passed, 0 failed"
