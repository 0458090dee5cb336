#!/usr/bin/env bash
# tests/bench/stack-shares.sh - how whole the cpu and signal collectors' default stacks are (issue 14).
#
# Run from the repository root after `make sigprof workloads` (`make bench` runs it after bench.sh).
# For each workload: ./sigprof record -e cpu,signal -o FILE -- WORKLOAD (no --call-graph: the collectors'
# defaults), then ./sigprof report --json, and over the stacks of the two collectors that have a user frame,
# weighted by their sample counts (not those of one frame: the sampled IP of an event recorded without a stack,
# the signal collector's rt_sigreturn):
#   unwind   the share whose last frame is an [unwind: REASON] (the stack stopped early and says why);
#   bare     the share whose last frame is a user frame with no name at all, an address ("[unknown]+0x3e7",
#            "stress-ng+0x65250"): in no mapping, or in a file without a symbol for it (perf's [unknown]);
#   eh_frame the share whose last frame is named only from .eh_frame ("stress-ng!fn@0x65230": a stripped
#            program's own _start, a whole stack);
#   whole    the share whose last frame is a thread's or program's first (_start, _dl_start_user, __clone3,
#            clone, or a stripped program's .eh_frame-named _start under __libc_start_main): the stack reaches its
#            root (a frame-pointer walk that stops early in named code counts in none of the others; one never
#            shows a thread's __clone3, which clears the frame pointer, so its thread stacks stop at start_thread);
#   signal   of the stacks that pass a signal frame, the share that reach __libc_start_call_main (the
#            program's main), when any does;
#   unsampled  the tracepoint hits the kernel dropped without a LOST record (throttling: meta.unsampled_hits),
#            whose deliveries a handler's stack cannot be joined to.
# Workloads: timer = stress-ng --timer 1 -t S; futex-hash = perf bench futex hash -r S -t 2 (each skipped when
# its tool is missing); storm = signal_storm 20000; altstack = altstack_handler_nofp 200 (a handler built without
# frame pointers on an alternate signal stack); nofp-mutex = mutex_contend_nofp 4 20000.
# Environment: STACKS_SECONDS (default 3), STACKS_REPEAT (default 1) recordings per workload (each printed),
# SIGPROF (default ./sigprof), BENCH_WORKLOADS (default build/workloads).
# Exit status: 0, or 1 when a recording or report fails.
set -euo pipefail

S=${STACKS_SECONDS:-3}
REPEAT=${STACKS_REPEAT:-1}
SIGPROF=${SIGPROF:-./sigprof}
W=${BENCH_WORKLOADS:-build/workloads}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sigprof-stacks.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

command -v jq >/dev/null || { echo "stack-shares: jq is missing (apt-get install jq)"; exit 0; }

declare -a NAMES CMDS
add() { NAMES+=("$1"); CMDS+=("$2"); }
command -v stress-ng >/dev/null && add timer "stress-ng --timer 1 -t $S"
command -v perf >/dev/null && add futex-hash "perf bench futex hash -r $S -t 2"
add storm "$W/signal_storm 20000"
add altstack "$W/altstack_handler_nofp 200"
add nofp-mutex "$W/mutex_contend_nofp 4 20000"

# over .stacks of cpu and signal with a user frame: "samples unwind bare eh_frame through_signal reach_main"
SHARES='
  def user: map(select(.dso != "[kernel]"));
  [.stacks[] | select((.collector == "cpu" or .collector == "signal") and (.frames | user | length > 0)
                    and (.frames | length > 1))] as $s
  | ($s | map(.count) | add // 0) as $all
  | ($s | map(select(.frames[-1].sym // "" | startswith("[unwind: "))) | map(.count) | add // 0) as $unwind
  | ($s | map(select(.frames[-1] | has("offset") and .dso != "[kernel]")) | map(.count) | add // 0) as $bare
  | ($s | map(select(.frames[-1].sym // "" | contains("!fn@"))) | map(.count) | add // 0) as $eh
  | ($s | map(select(.frames | any(.[]; .sym // "" | startswith("[signal"))))) as $sig
  | ($sig | map(.count) | add // 0) as $through
  | ($sig | map(select(.frames | any(.[]; .sym == "__libc_start_call_main"))) | map(.count) | add // 0) as $main
  | ($s | map(select(.frames | (.[-1].sym // "") as $last | ($last | IN("_start", "_dl_start_user", "__clone3",
        "clone3", "__clone", "clone")) or (($last | contains("!fn@")) and (.[-2].sym // "") == "__libc_start_main")))
      | map(.count) | add // 0) as $whole
  | "\($all) \($unwind) \($bare) \($eh) \($whole) \($through) \($main) \(.meta.unsampled_hits)"'

pct() { awk -v n="$1" -v d="$2" 'BEGIN { if (d == 0) printf "-"; else printf "%.1f%%", 100 * n / d }'; }

echo "stack shares of the cpu and signal collectors' default stacks; sigprof: $SIGPROF"
printf '%-11s %9s %8s %8s %9s %8s %14s %9s %10s\n' workload stacks unwind bare eh_frame whole "through signal" \
    "reach main" unsampled
for i in "${!NAMES[@]}"; do
    for ((r = 1; r <= REPEAT; r++)); do
        f=$TMP/${NAMES[$i]}.data
        # shellcheck disable=SC2086
        if ! "$SIGPROF" record -e cpu,signal -o "$f" -- ${CMDS[$i]} >"$TMP/log" 2>&1; then
            echo "stack-shares: recording ${NAMES[$i]} failed:"; tail -5 "$TMP/log"; exit 1
        fi
        "$SIGPROF" report -i "$f" --json >"$TMP/r.json" || { echo "stack-shares: report of ${NAMES[$i]} failed"; exit 1; }
        read -r all unwind bare eh whole through main unsampled < <(jq -r "$SHARES" "$TMP/r.json")
        printf '%-11s %9s %8s %8s %9s %8s %14s %9s %10s\n' "${NAMES[$i]}" "$all" "$(pct "$unwind" "$all")" \
            "$(pct "$bare" "$all")" "$(pct "$eh" "$all")" "$(pct "$whole" "$all")" "$through" \
            "$(pct "$main" "$through")" "$unsampled"
    done
done
