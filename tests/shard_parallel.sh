#!/bin/sh
# A sharded sweep as it runs across machines: GNU parallel starts the N
# parts (local jobs standing in for `parallel -S host1,host2`), each writes
# its own file, and varprof merge joins them; the result must be the
# unsharded run's output byte for byte, for a train sweep (CSV) and a
# profile sweep (JSON). `make check` runs it.
#   tests/shard_parallel.sh [VARPROF]
set -eu
varprof=${1:-build/varprof}
case $varprof in /*) ;; *) varprof=$(pwd)/$varprof ;; esac
command -v parallel > /dev/null || { echo "shard_parallel: GNU parallel is missing (scripts/install-deps test)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$tmp"

# one sweep: its whole output, then N parts by GNU parallel, merged
check() {
    name=$1 parts=$2 ext=$3
    shift 3
    "$varprof" "$@" --output "whole.$ext"
    seq 1 "$parts" | parallel --will-cite --halt now,fail=1 -j 2 \
        "'$varprof' $* --shard {}/$parts --output $name-part{}.$ext"
    set --
    for k in $(seq 1 "$parts"); do set -- "$@" "$name-part$k.$ext"; done
    "$varprof" merge "$@" --output "merged.$ext"
    if cmp -s "whole.$ext" "merged.$ext"; then
        echo "shard_parallel: $name, $parts parts through GNU parallel, merged: the whole run's bytes"
    else
        echo "shard_parallel: $name: the merged parts differ from the whole run:" >&2
        diff "whole.$ext" "merged.$ext" | head -20 >&2
        exit 1
    fi
    rm -f "whole.$ext" "merged.$ext" "$name"-part*
}

check train 8 csv train --placement pre-norm,post-ln --layers 2,4,6,8 --lr 1e-3,3e-3 \
    --steps 20 --threads 1 --format csv
check profile 5 json --placement all --gain 0.5,1 --layers 4,16 --engine closed,mc \
    --trials 500 --threads 1 --format json
