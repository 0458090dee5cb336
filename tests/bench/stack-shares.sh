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
#
# The corpus (`tests/stack-shares.sh --corpus`, issue 22): real programs from Debian, each recorded with every
# default (`sigprof record -o FILE -- PROGRAM`: all collectors, their own call graphs), CORPUS_SECONDS (default 2)
# each: the stress-ng stressors on the signal, futex and scheduler paths (CORPUS_STRESSORS), perf bench futex
# hash (with and without -S), wake, wake-parallel, requeue, lock-pi, perf bench sched messaging and pipe, xz -T2
# on generated data, sysbench threads and mutex (each skipped when its tool is missing).  Per program:
#   whole    per collector, the share of its user stacks of two frames or more (weighted by their counts; a
#            one-frame stack is the sampled IP of an event recorded without a stack: a futex exit) that reach
#            a thread's or program's first frame (as above), or end where a frame-pointer walk through a
#            program built with them ends, at __libc_start_call_main or start_thread, with no [unwind: ...];
#   unnamed  the share of all those stacks whose last frame has no name (an address) or is an [unwind: ...];
#   lost     lost records against records kept;
#   self     sigprof's count against what the program reports of itself: perf bench futex hash and lock-pi,
#            the exact futex(2) entries against "Averaged N operations/sec" x threads x seconds (lock-pi: a
#            lock and an unlock an operation, so 2); stress-ng --futex, its WAKE calls against its bogo ops
#            (a wake an op); - where the program says nothing countable;
#   shared   the futex words shared between processes (one row each, keyed by mapped object and offset) and
#            how many of them have both waiters and wakers.
# With --cost (CORPUS_ROUNDS interleaved rounds, default 5) the programs that report a throughput also run
# bare, under `sigprof record` (every default), `perf record -g` and `perf record --call-graph dwarf,8192
# -m 1024` with the events sigprof's default opens (cpu-clock and the signal, futex, sched and lock
# tracepoints), and the medians of the throughput each keeps, as a fraction of the bare run's, are printed,
# then the median share of its samples each recording lost (sigprof's closing line, perf's "lost P%!"): perf
# keeps its throughput on the busiest programs by dropping what its ring buffer cannot take.
# With --cost --split each collector also runs alone (`sigprof record -e cpu`, signal, futex, sched, lock: columns
# sp-cpu ...), which says where the default's cost goes (docs/performance.md, 2026-12-07).  CORPUS_ONLY="sng-signal
# hash" keeps the programs of those names (the first column).
# Exit status: 0, or 1 when a recording or report fails.
set -euo pipefail

S=${STACKS_SECONDS:-3}
REPEAT=${STACKS_REPEAT:-1}
SIGPROF=${SIGPROF:-./sigprof}
W=${BENCH_WORKLOADS:-build/workloads}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sigprof-stacks.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

command -v jq >/dev/null || { echo "stack-shares: jq is missing (apt-get install jq)"; exit 0; }

pct() { awk -v n="$1" -v d="$2" 'BEGIN { if (d == 0) printf "-"; else printf "%.1f%%", 100 * n / d }'; }

# ---- the corpus (--corpus [--cost]) ----

CS=${CORPUS_SECONDS:-2}
CROUNDS=${CORPUS_ROUNDS:-5}
CORPUS_STRESSORS=${CORPUS_STRESSORS:-"signal nanosleep timer itimer sigfd sigq sigsuspend pthread clock sigrt mutex msg futex sem-sysv"}

# per collector "collector stacks whole", then "unnamed ALL"; stacks of two frames or more with a user frame
CORPUS_SHARES='
  def user: map(select(.dso != "[kernel]"));
  def whole: (.[-1].sym // "") as $last | ($last | IN("_start", "_dl_start_user", "__clone3", "clone3", "__clone",
      "clone", "__libc_start_call_main", "start_thread")) or (($last | contains("!fn@")) and ((.[-2].sym // "")
      | IN("__libc_start_main", "start_thread")));
  def unnamed: .frames[-1] | (has("offset") and .dso != "[kernel]") or ((.sym // "") | startswith("[unwind: "));
  def total: map(.count) | add // 0;
  def multi: select(.shared and (.pids | length) > 1);
  [.stacks[] | select((.frames | user | length > 0) and (.frames | length > 1))] as $s
  | ($s | group_by(.collector) | map("\(.[0].collector) \(total) \(map(select(.frames | whole)) | total)") | .[]),
    "unnamed \($s | total) \($s | map(select(unnamed)) | total)",
    "lost \(.meta.lost // 0) \(.meta.samples // 0)",
    ([.futexes[]? | multi] as $m | "shared \($m | length) \($m | map(select((.waiters | length) > 0 and (.wakers | length) > 0)) | length)"),
    "futex_calls \(.futex_summary.syscalls.sys_enter_futex.total // 0) \([.futexes[]?.ops.WAKE // 0] | add // 0)"'

corpus_programs() { # corpus_all_programs, those named in CORPUS_ONLY when it is set
    corpus_all_programs | awk -F '\t' -v only=" ${CORPUS_ONLY:-} " 'only == "  " || index(only, " " $1 " ")'
}

corpus_all_programs() { # lines "name<TAB>command<TAB>throughput kind"
    local s
    if command -v stress-ng >/dev/null; then
        for s in $CORPUS_STRESSORS; do
            printf 'sng-%s\tstress-ng --%s 2 -t %s --metrics-brief\tsng:%s\n' "$s" "$s" "$CS" "$s"
        done
    fi
    if command -v perf >/dev/null && perf bench futex hash -r 1 -t 1 >/dev/null 2>&1; then
        printf 'hash\tperf bench futex hash -r %s -t 2\taveraged:2\n' "$CS"
        printf 'hash-S\tperf bench futex hash -S -r %s -t 2\taveraged:2\n' "$CS"
        printf 'wake\tperf bench futex wake -t 4 -w 1\t-\n'
        printf 'wake-parallel\tperf bench futex wake-parallel -t 4 -w 2\t-\n'
        printf 'requeue\tperf bench futex requeue -t 4\t-\n'
        printf 'lock-pi\tperf bench futex lock-pi -r %s -t 2\taveraged:2\n' "$CS"
        printf 'messaging\tperf bench sched messaging -g 2 -l 100\ttotal-time\n'
        printf 'pipe\tperf bench sched pipe -l 20000\ttotal-time\n'
    fi
    command -v xz >/dev/null && printf 'xz\txz -T2 -k -f %s\telapsed\n' "$CORPUS_DATA"
    if command -v sysbench >/dev/null; then
        printf 'sb-threads\tsysbench threads --threads=2 --time=%s run\tsb-events:%s\n' "$CS" "$CS"
        printf 'sb-mutex\tsysbench mutex --threads=2 run\telapsed\n'
    fi
}

# throughput of one run from its output file (and its elapsed ns for the "elapsed" kind)
corpus_ops() { # KIND FILE ELAPSED_NS
    case $1 in
        sng:*) awk -v s="${1#sng:}" '$2 == "metrc:" && $4 == s && $5 ~ /^[0-9]+$/ { v = $(NF - 1) } END { if (v != "") print v }' "$2" ;;
        averaged:*) awk '$1 == "Averaged" && $3 == "operations/sec" { v = $2 } END { if (v != "") print v }' "$2" ;;
        total-time) awk '$1 == "Total" && $2 == "time:" { v = 1 / $3 } END { if (v != "") print v }' "$2" ;;
        sb-events:*) awk -v s="${1#sb-events:}" '/total number of events:/ { v = $NF / s } END { if (v != "") print v }' "$2" ;;
        elapsed) awk -v ns="$3" 'BEGIN { print 1e9 / ns }' ;;
    esac
}

# sigprof's count against the program's own: "-" where the program says nothing countable
corpus_self() { # NAME KIND OUTPUT FUTEX_CALLS WAKE_CALLS
    local ops
    case $1 in
        hash | hash-S | lock-pi)
            ops=$(corpus_ops "$2" "$3" 0)
            [[ -n $ops ]] && awk -v c="$4" -v o="$ops" -v t="${2#averaged:}" -v s="$CS" \
                'BEGIN { printf "%.2f", c / (o * t * s) }' && return ;;
        sng-futex)
            ops=$(awk '$2 == "metrc:" && $4 == "futex" && $5 ~ /^[0-9]+$/ { v = $5 } END { if (v != "") print v }' "$3")
            [[ -n $ops ]] && awk -v c="$5" -v o="$ops" 'BEGIN { printf "%.2f", c / o }' && return ;;
    esac
    printf -- '-'
}

# the share of samples a recording lost, from its closing lines: sigprof's "N lost (P%)", perf's "lost P%!"
corpus_lost() { # OUTPUT
    awk '/^sigprof: recorded / && match($0, /lost \([0-9.]+%\)/) { v = substr($0, RSTART + 6, RLENGTH - 8) }
         /^Processed [0-9]+ samples and lost / && match($0, /lost [0-9.]+%/) { v = substr($0, RSTART + 5, RLENGTH - 6) }
         END { print v == "" ? 0 : v }' "$1"
}

corpus_perf_events() {
    local ev
    printf -- '-e cpu-clock '
    for ev in signal:signal_generate signal:signal_deliver syscalls:sys_enter_rt_sigreturn syscalls:sys_enter_futex \
        syscalls:sys_exit_futex sched:sched_switch sched:sched_waking sched:sched_wakeup_new sched:sched_migrate_task \
        lock:contention_begin lock:contention_end; do
        [[ -d /sys/kernel/tracing/events/${ev%%:*}/${ev#*:} || -d /sys/kernel/debug/tracing/events/${ev%%:*}/${ev#*:} ]] &&
            printf -- '-e %s ' "$ev"
    done
}

corpus_shares() {
    local name cmd kind f out coll n w all=0 unnamed=0 lost=0 kept=0 shared=0 both=0 calls=0 wakes=0 self
    printf '%-14s %8s %-34s %8s %7s %5s %7s\n' program stacks "whole per collector" unnamed lost self shared
    while IFS=$'\t' read -r name cmd kind; do
        f=$TMP/$name.data
        out=$TMP/$name.out
        # shellcheck disable=SC2086
        if ! "$SIGPROF" record -q -o "$f" -- $cmd >"$out" 2>&1; then
            echo "stack-shares: recording $name failed:"; tail -5 "$out"; return 1
        fi
        "$SIGPROF" report -i "$f" --json >"$TMP/r.json" || { echo "stack-shares: report of $name failed"; return 1; }
        local wholes='' total=0
        while read -r coll n w; do
            case $coll in
                unnamed) all=$n; unnamed=$w ;;
                lost) lost=$n; kept=$w ;;
                shared) shared=$n; both=$w ;;
                futex_calls) calls=$n; wakes=$w ;;
                *) wholes+="$coll $(pct "$w" "$n") "; total=$((total + n)) ;;
            esac
        done < <(jq -r "$CORPUS_SHARES" "$TMP/r.json")
        self=$(corpus_self "$name" "$kind" "$out" "$calls" "$wakes")
        printf '%-14s %8s %-34s %8s %7s %5s %7s\n' "$name" "$all" "${wholes:--}" "$(pct "$unnamed" "$all")" \
            "$(pct "$lost" $((lost + kept)))" "$self" "$shared/$both"
        rm -f "$f"
    done < <(corpus_programs)
}

corpus_cost() {
    local -a names cmds kinds
    local name cmd kind r i mode out t0 t1 ops
    while IFS=$'\t' read -r name cmd kind; do
        [[ $kind == - ]] && continue
        names+=("$name"); cmds+=("$cmd"); kinds+=("$kind")
    done < <(corpus_programs)
    declare -A RES LOST
    local events
    events=$(corpus_perf_events)
    for ((r = 1; r <= CROUNDS; r++)); do
        for i in "${!names[@]}"; do
            for mode in "${CORPUS_MODES[@]}"; do
                out=$TMP/cost.out
                t0=$(date +%s%N)
                # shellcheck disable=SC2086
                case $mode in
                    bare) ${cmds[$i]} >"$out" 2>&1 ;;
                    sigprof) "$SIGPROF" record -o "$TMP/c.data" -- ${cmds[$i]} >"$out" 2>&1 ;;
                    sp-*) "$SIGPROF" record -e "${mode#sp-}" -o "$TMP/c.data" -- ${cmds[$i]} >"$out" 2>&1 ;;
                    perf-g) perf record -g $events -o "$TMP/c.data" -- ${cmds[$i]} >"$out" 2>&1 ;;
                    perf-dwarf) perf record --call-graph dwarf,8192 -m 1024 $events -o "$TMP/c.data" -- \
                        ${cmds[$i]} >"$out" 2>&1 ;;
                esac
                t1=$(date +%s%N)
                ops=$(corpus_ops "${kinds[$i]}" "$out" $((t1 - t0)))
                RES[${names[$i]}.$mode]+="${ops:-0} "
                [[ $mode != bare ]] && LOST[${names[$i]}.$mode]+="$(corpus_lost "$out") "
                rm -f "$TMP/c.data"
            done
        done
    done
    corpus_table_head "$(printf 'throughput kept (median of %d interleaved rounds, as a fraction of the bare run)' \
        "$CROUNDS")" bare
    for name in "${names[@]}"; do
        local bare
        # shellcheck disable=SC2086
        bare=$(corpus_median ${RES[$name.bare]})
        printf '%-14s %12.6g' "$name" "$bare"
        for mode in "${CORPUS_MODES[@]:1}"; do
            # shellcheck disable=SC2086
            printf ' %10s' "$(awk -v m="$(corpus_median ${RES[$name.$mode]})" -v b="$bare" \
                'BEGIN { if (b > 0) printf "%.3f", m / b; else printf "-" }')"
        done
        printf '\n'
    done
    # perf keeps its throughput on the busiest programs by losing records (its ring buffer full, the kernel
    # drops what does not fit); a throughput is only comparable beside what the recording kept
    corpus_table_head 'records lost (median % of the samples the kernel had to write)' ''
    for name in "${names[@]}"; do
        printf '%-14s %12s' "$name" ''
        for mode in "${CORPUS_MODES[@]:1}"; do
            # shellcheck disable=SC2086
            printf ' %9.1f%%' "$(corpus_median ${LOST[$name.$mode]})"
        done
        printf '\n'
    done
}

# the median of the numbers given (the lower of the two middle ones of an even count)
corpus_median() {
    printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

# a cost table's title and column heads: program, SECOND, then one per mode but the bare run
corpus_table_head() { # TITLE SECOND
    printf '\n%s\n%-14s %12s' "$1" program "$2"
    printf ' %10s' "${CORPUS_MODES[@]:1}"
    printf '\n'
}

if [[ ${1:-} == --corpus ]]; then
    CORPUS_DATA=$TMP/corpus-input
    # compressible and not: 14 MB of numbers, then 6 MB of random bytes
    { seq 1 2000000; head -c 6000000 /dev/urandom; } >"$CORPUS_DATA"
    echo "corpus: every default of $SIGPROF record, $CS s a program; load average $(cut -d' ' -f1-3 /proc/loadavg)"
    corpus_shares || exit 1
    CORPUS_MODES=(bare sigprof perf-g perf-dwarf)
    # --split: each collector alone too (sp-cpu: `sigprof record -e cpu`, ...), where the default's cost goes
    [[ ${3:-} == --split ]] && CORPUS_MODES+=(sp-cpu sp-signal sp-futex sp-sched sp-lock)
    [[ ${2:-} == --cost ]] && corpus_cost
    exit 0
fi

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
