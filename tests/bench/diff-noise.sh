#!/bin/bash
# tests/bench/diff-noise.sh: the false-positive rate of `sigprof diff` (docs/diff.md).  For each workload, SERIES times:
# 6 runs of the unchanged workload in one `record -r 6` series, runs 1, 3, 5 against 2, 4, 6; prints the rows, the
# significant ones, and the significant exact counts of each comparison, then the totals.  Needs root (tracepoints).
# Run from the repository root after `make all workloads`: tests/bench/diff-noise.sh [SERIES]
set -euo pipefail
series=${1:-3}
sigprof=./sigprof
workloads=build/workloads
dir=$(mktemp -d /tmp/sigprof-diff-noise.XXXXXX)
trap 'rm -rf "$dir"' EXIT
total_rows=0 total_significant=0 total_exact=0
percent() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b ? 100 * a / b : 0 }'; }
compare() { # NAME CMD...
	local name=$1; shift
	for s in $(seq 1 "$series"); do
		local p="$dir/$name$s"
		"$sigprof" record -q -r 6 -o "$p.data" -- "$@" >/dev/null 2>&1
		"$sigprof" diff --all --json "$p.1.data" "$p.3.data" "$p.5.data" -- "$p.2.data" "$p.4.data" "$p.6.data" \
			>"$p.json"
		local rows significant exact
		rows=$(jq '.rows | length' "$p.json")
		significant=$(jq '[.rows[] | select(.significant)] | length' "$p.json")
		exact=$(jq '[.rows[] | select(.significant and .exact_count)] | length' "$p.json")
		printf '%-28s series %d: %4d rows, %3d significant (%.1f%%), %d significant exact counts\n' "$*" "$s" \
			"$rows" "$significant" "$(percent "$significant" "$rows")" "$exact"
		total_rows=$((total_rows + rows)) total_significant=$((total_significant + significant))
		total_exact=$((total_exact + exact))
	done
}
compare spin "$workloads/signal_spin" 2000 1000
compare wake "$workloads/futex_wake_many" 2000
printf 'total: %d of %d rows significant (%.1f%%), %d significant exact counts\n' "$total_significant" \
	"$total_rows" "$(percent "$total_significant" "$total_rows")" "$total_exact"
