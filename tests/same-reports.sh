#!/usr/bin/env bash
# tests/same-reports.sh - whether two builds of sigprof report the same recordings byte for byte.
#
# A change that only moves or renames code (docs/layers.md) must not change what any report says.
# This records the bundled workloads once (with NEW), then reports every recording with both builds in
# every format (text, JSON, folded, figures, script) and compares the outputs.  Prints one line per
# output that differs, with the command to see it, and a closing line; exits 1 when any differs.
#
# usage: tests/same-reports.sh OLD_SIGPROF NEW_SIGPROF [WORKDIR]
#   e.g. git worktree add /tmp/before HEAD~1 && make -C /tmp/before && make &&
#        tests/same-reports.sh /tmp/before/sigprof ./sigprof
# Needs what `sigprof record` needs (root, or perf_event_paranoid low enough for tracepoints).
set -uo pipefail

[ $# -ge 2 ] || { echo "usage: $0 OLD_SIGPROF NEW_SIGPROF [WORKDIR]" >&2; exit 2; }
old=$(realpath "$1") new=$(realpath "$2")
root=$(cd "$(dirname "$0")/.." && pwd)
work=${3:-$(mktemp -d)}
mkdir -p "$work"
w=$root/${BUILD:-build}/workloads
[ -x "$w/signal_storm" ] || { echo "same-reports: build the workloads first (make workloads)" >&2; exit 2; }

# name, then the workload's command line: one of each collector's ground-truth workloads
runs=(
	"signal_storm $w/signal_storm 5000"
	"sig_nested $w/sig_nested"
	"futex_wake_many $w/futex_wake_many"
	"lock_bucket $w/lock_bucket 2 20000"
	"sched_pingpong $w/sched_pingpong 5000"
	"mutex_contend_nofp $w/mutex_contend_nofp 2 20000"
	"cpu_burner $w/cpu_burner"
)
formats=("text:" "json:--json" "folded:--folded" "figures:--figures")

compared=0 differ=0
for run in "${runs[@]}"; do
	read -r -a words <<<"$run"
	name=${words[0]}
	data=$work/$name.data
	if ! "$new" record -q -o "$data" -- "${words[@]:1}" >/dev/null 2>"$work/$name.record.err"; then
		echo "same-reports: could not record $name: $(head -1 "$work/$name.record.err")" >&2
		exit 2
	fi
	for f in "${formats[@]}"; do
		fmt=${f%%:*} opt=${f#*:}
		# shellcheck disable=SC2086 # opt is one option or none
		"$old" report --no-pager -i "$data" $opt >"$work/$name.$fmt.old" 2>&1
		# shellcheck disable=SC2086
		"$new" report --no-pager -i "$data" $opt >"$work/$name.$fmt.new" 2>&1
		compared=$((compared + 1))
		if ! cmp -s "$work/$name.$fmt.old" "$work/$name.$fmt.new"; then
			differ=$((differ + 1))
			echo "differs: $name report $opt (diff $work/$name.$fmt.old $work/$name.$fmt.new)"
		fi
	done
	"$old" script -i "$data" >"$work/$name.script.old" 2>&1
	"$new" script -i "$data" >"$work/$name.script.new" 2>&1
	compared=$((compared + 1))
	if ! cmp -s "$work/$name.script.old" "$work/$name.script.new"; then
		differ=$((differ + 1))
		echo "differs: $name script (diff $work/$name.script.old $work/$name.script.new)"
	fi
done
echo "same-reports: $compared outputs of ${#runs[@]} recordings compared, $differ differ (in $work)"
[ $differ = 0 ]
