#!/bin/bash
# diff-noise.sh: how often `sigprof diff` flags a figure that did not change, and whether it still finds the changes
# it must (docs/diff.md's tables).  Needs root (tracepoints); run from the repository root after `make all workloads`:
#   tests/bench/diff-noise.sh [DIR]      (DIR keeps the recordings; default a temporary directory, removed at the end)
#
# 1. False positives: 10 runs of one unchanged workload in one `record -r 10` series (a signal, a futex-hash and a
#    sched-heavy workload), split alternately, runs 1,3,5 against 2,4,6 (3 vs 3) and odd against even (5 vs 5):
#    the tested rows, the rows flagged by the default rules (LKP's and a 5% false discovery rate) and by LKP's alone.
# 2. Detection at 3 vs 3, both sides recorded alternately by `diff -r 3 --run`: a handler spinning 8x longer, twice
#    the futex wakes, perf bench futex hash -t 1 against -t 2, stress-ng --timer at two --timer-freq, and where the
#    kernel has PR_FUTEX_HASH a private futex hash of 2 buckets against the global one: the verdict of the row that
#    must move, and the rows flagged by each rule.
set -euo pipefail
sigprof=./sigprof
workloads=build/workloads
if [ $# -ge 1 ]; then
	dir=$1
	mkdir -p "$dir"
else
	dir=$(mktemp -d /tmp/sigprof-diff-noise.XXXXXX)
	trap 'rm -rf "$dir"' EXIT
fi
echo "# $(uname -r), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"

flagged() { # JSON: tested rows, flagged by the default rules, flagged by LKP's rule alone
	jq -r '[([.rows[] | select(.p != null)] | length), ([.rows[] | select(.significant)] | length),
		([.rows[] | select(.lkp_verdict == "significant")] | length)] | map(tostring) | join(" ")' "$1"
}

same() { # NAME CMD...: 10 runs of one command, split alternately
	local name=$1
	shift
	[ -f "$dir/$name.10.data" ] || "$sigprof" record -q -r 10 -o "$dir/$name.data" -- "$@" >/dev/null 2>&1
	local split
	for split in 3 5; do
		local base=() new=()
		for i in $(seq 1 $((2 * split))); do
			if [ $((i % 2)) = 1 ]; then base+=("$dir/$name.$i.data"); else new+=("$dir/$name.$i.data"); fi
		done
		"$sigprof" diff --all --json "${base[@]}" -- "${new[@]}" 2>/dev/null >"$dir/$name-$split.json"
		read -r tested significant lkp < <(flagged "$dir/$name-$split.json")
		printf '| %s | %d vs %d | %d | %d (%.1f%%) | %d (%.1f%%) |\n' "$*" "$split" "$split" "$tested" \
			"$significant" "$(awk -v a="$significant" -v b="$tested" 'BEGIN { print b ? 100 * a / b : 0 }')" \
			"$lkp" "$(awk -v a="$lkp" -v b="$tested" 'BEGIN { print b ? 100 * a / b : 0 }')"
	done
}

echo
echo "| unchanged workload, 10 runs | split | rows tested | flagged (default) | flagged (--rules lkp) |"
echo "|---|---|---|---|---|"
same signal "$workloads/signal_spin" 20000 1000
same futex-hash perf bench futex hash -t 2 -r 1
same sched "$workloads/sched_pingpong" 20000

changed() { # NAME KEY BASECMD... -- NEWCMD...: 3 runs a side, alternately
	local name=$1 key=$2
	shift 2
	mkdir -p "$dir/$name"
	[ -f "$dir/$name/new.3.data" ] || "$sigprof" diff -r 3 --run-dir "$dir/$name" --run "$@" >/dev/null 2>&1 || true
	"$sigprof" diff --all --json "$dir/$name"/base.{1,2,3}.data -- "$dir/$name"/new.{1,2,3}.data 2>/dev/null \
		>"$dir/$name.json"
	read -r tested significant lkp < <(flagged "$dir/$name.json")
	local row
	row=$(jq -r --arg k "$key" '[.rows[] | select(.key == $k)] | first |
		if . == null then "no such row" else "\(.change_percent | if . == null then "-" else (. * 10 | round / 10 |
		tostring) + "%" end), \(.verdict) (LKP: \(.lkp_verdict)), q \(.q)" end' "$dir/$name.json")
	local command=("$@")
	printf '| %s | `%s`: %s | %d | %d | %d |\n' "${command[*]}" "$key" "$row" "$tested" "$significant" "$lkp"
}

echo
echo "| change, 3 vs 3 alternately | the row that must move | rows tested | flagged (default) | flagged (--rules lkp) |"
echo "|---|---|---|---|---|"
changed spin signal.SIGUSR1.handler_us.p50 "$workloads/signal_spin" 2000 1000 -- "$workloads/signal_spin" 2000 8000
changed wake futex.syscall.futex.calls "$workloads/futex_wake_many" 1000 -- "$workloads/futex_wake_many" 2000
changed hash perf-bench-futex.ops/s perf bench futex hash -t 1 -r 1 -- perf bench futex hash -t 2 -r 1
changed timer stress-ng.timer.ops_per_sec stress-ng --timer 1 --timer-freq 1000 -t 2 --metrics-brief -- \
	stress-ng --timer 1 --timer-freq 4000 -t 2 --metrics-brief
# the seed-002 change in miniature: a private futex hash of 2 buckets against the global one (Linux 6.16+)
if "$workloads/futex_hash_buckets" 1 1 2 >/dev/null 2>&1; then
	changed buckets lock.taken_in.futex_wait_setup.contentions "$workloads/futex_hash_buckets" 2 100000 0 -- \
		"$workloads/futex_hash_buckets" 2 100000 2
else
	echo "| futex_hash_buckets 2 100000 0 -- 2 | not measured: this kernel has no PR_FUTEX_HASH (Linux 6.16+) | | | |"
fi
echo
echo "# load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
