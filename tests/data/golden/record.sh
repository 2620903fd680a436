#!/bin/sh
# Records the golden outputs of cases.txt with the program at $VARPROF
# (default build/varprof), run from the repository's top: each case's
# standard output and exit code, for the scalar instruction set or, for an
# "each" case, for every one this CPU supports (run it on an AVX-512
# machine so that all three are recorded). Re-record only when a change is
# meant to move a number, and say why in the commit.
set -eu
cd "$(dirname "$0")/../../.."
prog=${VARPROF:-build/varprof}
out=tests/data/golden
isas="scalar"
for isa in avx2 avx512; do
    VARPROF_ISA=$isa "$prog" --version >/dev/null 2>&1 && isas="$isas $isa"
done
grep -v '^#' "$out/cases.txt" | while IFS='|' read -r name mode args; do
    [ -n "$name" ] || continue
    args=$(printf '%s' "$args" | sed 's|@DATA@|tests/data|g')
    case $mode in
    any) runs=scalar ;;
    each) runs=$isas ;;
    *) echo "record.sh: case $name: mode '$mode' is not any or each" >&2; exit 1 ;;
    esac
    for isa in $runs; do
        file=$out/$name.out
        [ "$mode" = each ] && file=$out/$name.$isa.out
        # shellcheck disable=SC2086 # the arguments are split on spaces
        VARPROF_ISA=$isa "$prog" $args > "$file" 2>/dev/null || {
            echo "record.sh: case $name ($isa) exited $?" >&2; exit 1; }
    done
done
echo "record.sh: recorded $(grep -vc '^#' "$out/cases.txt") cases for: $isas"
