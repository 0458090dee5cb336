#!/usr/bin/env bash
# tests/bench/bench.sh - sigprof against perf: recording overhead, lost records and report time.
#
# Run from the repository root after `make sigprof workloads` (`make bench` does both).
# Four tables come out of one run: the cpu collector against `perf record -g` (table 1), the tracepoint
# collectors (signal, futex, sched) against perf recording the same tracepoints (table 2, issue 3), the
# same collectors with DWARF call graphs against `perf record --call-graph dwarf` (table 3, issue 4), and the
# lock collector against `perf lock record` + `perf lock report/contention` (table 5, issue 12; described at
# its code, after the targets of table 3).
#
# Method
#   Every workload runs for a fixed time and reports its own throughput; a tool's cost shows as the
#   throughput it takes away.
#   Table 1 (BENCH_SECONDS per run, default 3):
#     timer  stress-ng --timer 1 --timer-freq 100000 -t S --metrics-brief
#            one process taking POSIX timer signals as fast as it can (signal deliver/sigreturn paths);
#            throughput = the timer line's "bogo ops/s (real time)" column.
#     futex  perf bench futex hash -r S -t 2
#            two threads hammering the futex hash table; throughput = "Averaged N operations/sec".
#     modes: bare (the workload alone); perf = perf record -g -F 4000 -o FILE -- WORKLOAD;
#            sigprof = ./sigprof record -e cpu -F 4000 -o FILE -- WORKLOAD (the cpu collector: what perf -g records)
#   Table 2 (BENCH_TRACE_SECONDS per run, default BENCH_SECONDS; BENCH_TRACE=0 skips it):
#     timer       stress-ng --timer 1 -t S --metrics-brief       (default 1 MHz timer; signal paths)
#     sng-futex   stress-ng --futex 2 -t S --metrics-brief       (futex waits and wakes with context switches;
#                 throughput = the futex line's "bogo ops/s (real time)")
#     futex-hash  perf bench futex hash -r S -t 2                (futex calls that never block)
#     modes (every workload):
#       bare        the workload alone
#       sp-all      ./sigprof record -e signal,futex,sched --call-graph fp -o FILE -- WORKLOAD
#                   (--futex sample, the default; frame-pointer stacks, what perf -g takes)
#       perf-all    perf record -g -o FILE  with the tracepoints those collectors open, per task:
#                   signal:signal_generate signal:signal_deliver syscalls:sys_enter_rt_sigreturn
#                   syscalls:sys_enter_futex syscalls:sys_exit_futex sched:sched_switch sched:sched_waking
#                   sched:sched_wakeup_new sched:sched_migrate_task   (a callchain on every event)
#       perf-fit    the same, with call-graph=no on the events sigprof records without a callchain
#                   (sys_enter_rt_sigreturn, sys_exit_futex, sched_waking, sched_wakeup_new, sched_migrate_task)
#     modes on the futex workloads (sng-futex, futex-hash):
#       sp-futex    ./sigprof record -e futex --call-graph fp -o FILE -- WORKLOAD
#       perf-trace  perf trace -s -e futex -- WORKLOAD                  (live per-thread futex summary)
#       sp-count    ./sigprof record -e futex --futex count -o FILE -- WORKLOAD   (counters only, the light mode)
#       perf-floor  perf stat -e syscalls:sys_enter_futex,syscalls:sys_exit_futex -- WORKLOAD   (the two
#                   tracepoints counted per task: the floor of any tracepoint-based mode; sp-count's cost must
#                   be within 1.15x of it, issue 22)
#     modes on sng-futex (the one with context switches):
#       sp-sched    ./sigprof record -e sched --call-graph fp -o FILE -- WORKLOAD
#       perf-sched  perf sched record -o FILE -- WORKLOAD               (system-wide, no callchains)
#       perf-schedg perf sched record -g -o FILE -- WORKLOAD            (system-wide, callchains on every event)
#   Table 3 (BENCH_DWARF=0 skips it; its modes run in table 2's rounds, against the same bare runs):
#     modes (every table-2 workload):
#       sp-default  ./sigprof record -e signal,futex,sched -o FILE -- WORKLOAD   (no options: each collector's
#                   own call graph, signal fp, futex and sched dwarf at the default stack size)
#       sp-dwarf    ./sigprof record -e signal,futex,sched --call-graph dwarf,SIZE -o FILE -- WORKLOAD
#       perf-dwarf  perf record --call-graph dwarf,SIZE -m PAGES -o FILE  with perf-fit's events: the same
#                   tracepoints, a user stack copy of SIZE bytes (BENCH_DWARF_SIZE, default 8192, perf's default)
#                   and the kernel's callchain on the events sigprof takes a stack on, call-graph=no on the
#                   others; PAGES is sigprof's ring size (-m, from `sigprof record --help`, 1024 pages = 4 MiB
#                   per CPU) because at perf's default (128 pages) perf drops most DWARF records and the
#                   workload runs as if unprofiled: a comparison of throughput needs both tools to keep them
#     Report time and unwinding, on one more pair of recordings per workload (the table-2 workloads and
#     nofp-mutex: build/workloads/mutex_contend_nofp 4 N, built without frame pointers, N sized to run about
#     BENCH_TRACE_SECONDS), taken once: the cpu collector and perf's cpu event with DWARF stacks at the same
#     rate, so that both tools unwind about the same number of samples (printed):
#       ./sigprof record -e cpu -F HZ --call-graph dwarf,SIZE -o F -- WORKLOAD
#       perf record -F HZ --call-graph dwarf,SIZE -o F -- WORKLOAD        (HZ: BENCH_DWARF_FREQ, default 1000)
#     timed as `perf report --stdio -i F` (perf unwinds a DWARF recording by itself; its report has no
#     --call-graph=dwarf) against `./sigprof report -i F`, like the other report times.  The tracepoint
#     recordings of the throughput runs are not timed: at 10^5 DWARF samples perf report takes minutes.
#     Stacks that end in [unknown], per sample, on the same pair: perf from `perf script -F ip,sym,dso`
#     (the outermost frame of each sample), sigprof from `report --json` (the last frame of each stack
#     before an [unwind: reason] frame, weighted by count).  Two kinds: "unmapped", an address in no
#     mapping (perf: [unknown] ([unknown]); sigprof: dso [unknown]), a lost unwind; "unnamed", a mapped address without a symbol (perf:
#     [unknown] (dso); sigprof: a frame with an offset), which for a stripped program is its own _start.
#     The target is on their sum, which is what perf prints as [unknown].  sigprof's share of stacks with an
#     [unwind: reason] frame (an unwind that stopped and says why; perf stops silently) is printed beside it.
#   A round runs every mode of every workload once; the order of the modes rotates from round to round
#   so that drift on a shared machine does not always hit the same mode.  BENCH_REPEAT rounds (default 5)
#   for all tables.  ratio = median over the rounds of (ops/s under the tool / bare ops/s of the same
#   round); lost-thr = 1 - ratio.  Samples and file size: median per run.
#   Lost: the sum over all rounds.  perf record: the per-event "LOST_SAMPLES events" of
#   `perf report --stats` (the kernel's lost counters, written by perf >= 6.0; `perf report -D` is read for
#   the PERF_RECORD_LOST sums only when a file has LOST records but no such counters); perf trace: its
#   "LOST N events!" lines; sigprof: meta.lost of `sigprof report --json`.  Table 2 also sums
#   sigprof's meta.unsampled_hits (tracepoint hits the kernel counted but did not sample: exact totals minus
#   samples; throttling is one cause) and the THROTTLE records of both tools (perf: "THROTTLE events" of
#   --stats; sigprof: meta.throttle_records).
#   Report time: on the last round's recordings (table 1: perf/sigprof of each workload; table 2: perf-all
#   and sp-all of each workload), `perf report --stdio -i F >/dev/null` and `./sigprof report -i F >/dev/null`,
#   each run once untimed to warm the page cache and then BENCH_REPORT_REPEAT times (default 3), wall
#   clock; the median is shown with the ratio perf/sigprof.
#
#   Table 4 (issue 13, storage; BENCH_STORAGE=0 skips it; BENCH_STORAGE_SECONDS per run, default
#   BENCH_TRACE_SECONDS), on table 2's timer and futex-hash workloads, each mode once per round:
#       bare        the workload alone
#       sp-zstd     ./sigprof record -o FILE -- WORKLOAD              (every default: compressed, zstd level 1)
#       sp-plain    ./sigprof record --no-compress -o FILE -- WORKLOAD (what every recording was before: version 1)
#       perf-g      perf record -g -o FILE -- WORKLOAD                 (perf's defaults: cycles or cpu-clock, 4000 Hz;
#                   it holds less: no tracepoints)
#     ratio as in table 1; MB: median file size (MiB) per run.
# Targets (printed as PASS/MISS with the margin; a miss does not change the exit status, this is a
# measurement): table 1: sigprof overhead <= perf overhead, 0 lost at the default rate, sigprof report >= 3x
# faster than perf report.  Table 2: throughput under sp-all >= under perf-all (and perf-fit), sp-futex >=
# perf-trace, sp-sched >= perf-sched (and perf-schedg); no lost records in any sigprof mode at defaults
# (meta.lost = 0), and, as a separate line, every tracepoint hit sampled (meta.unsampled_hits = 0).
# Table 4: sp-zstd's file <= 1.5x perf-g's; throughput under sp-zstd >= under sp-plain (compression costs the
# workload nothing: the writer thread compresses).
# Table 3: throughput under sp-dwarf >= under perf-dwarf and under sp-default >= under perf-dwarf (record
# overhead with DWARF stacks no larger than perf's), no lost records under sp-default, sigprof report of a
# DWARF recording >= 3x faster than perf report of perf's, share of stacks ending in [unknown] <= perf's.
#
# Environment: BENCH_SECONDS (default 3) seconds per run, BENCH_TRACE_SECONDS (default BENCH_SECONDS) per
# table-2 run, BENCH_REPEAT (default 5) rounds, BENCH_REPORT_REPEAT (default 3), BENCH_FREQ (default 4000)
# sampling rate of table 1, BENCH_TRACE (default 1; 0 skips tables 2 and 3), BENCH_DWARF (default 1; 0 skips
# table 3), BENCH_LOCK (default 1; 0 skips table 5, the lock collector), BENCH_DWARF_SIZE (default 8192), BENCH_DWARF_FREQ (default 1000), BENCH_WORKLOADS (default
# build/workloads), SIGPROF (default ./sigprof).
# Defaults (5 interleaved rounds, the fewest issue 22 takes a median of) take about 17 minutes (table 1 about 2.5,
# tables 2 and 3 about 10, the report timings about 2).
# A missing perf, stress-ng or jq skips what needs it with a note.
# Exit status: 0 when every measurement was taken, 1 when a tool or workload fails or its output
# cannot be parsed, 2 on bad usage.
set -euo pipefail

SECONDS_PER_RUN=${BENCH_SECONDS:-3}
TRACE_SECONDS=${BENCH_TRACE_SECONDS:-$SECONDS_PER_RUN}
REPEAT=${BENCH_REPEAT:-5}
REPORT_REPEAT=${BENCH_REPORT_REPEAT:-3}
FREQ=${BENCH_FREQ:-4000}
TRACE=${BENCH_TRACE:-1}
DWARF=${BENCH_DWARF:-1}
LOCK=${BENCH_LOCK:-1}
DWARF_SIZE=${BENCH_DWARF_SIZE:-8192}
DWARF_FREQ=${BENCH_DWARF_FREQ:-1000}
WORKLOADS_DIR=${BENCH_WORKLOADS:-build/workloads}
SIGPROF=${SIGPROF:-./sigprof}

for v in SECONDS_PER_RUN TRACE_SECONDS REPEAT REPORT_REPEAT FREQ DWARF_SIZE DWARF_FREQ; do
    if ! [[ ${!v} =~ ^[1-9][0-9]*$ ]]; then
        echo "bench: $v must be a positive integer (got '${!v}')" >&2
        exit 2
    fi
done
if ! [[ $TRACE =~ ^[01]$ && $DWARF =~ ^[01]$ && $LOCK =~ ^[01]$ ]]; then
    echo "bench: BENCH_TRACE, BENCH_DWARF and BENCH_LOCK must be 0 or 1 (got '$TRACE', '$DWARF', '$LOCK')" >&2
    exit 2
fi
if ((DWARF_SIZE % 8 || DWARF_SIZE > 65528)); then
    echo "bench: BENCH_DWARF_SIZE must be a multiple of 8 up to 65528 (got '$DWARF_SIZE')" >&2
    exit 2
fi
if [[ ! -x $SIGPROF ]]; then
    echo "bench: $SIGPROF not found; run 'make sigprof workloads' (or 'make bench') first" >&2
    exit 1
fi
SIGPROF=$(cd "$(dirname "$SIGPROF")" && pwd)/$(basename "$SIGPROF")

TMP=$(mktemp -d "${TMPDIR:-/tmp}/sigprof-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
T_START=$(date +%s)

die() {
    echo "bench: $*" >&2
    exit 1
}

# show the end of a log and fail
fail_log() {
    local msg=$1 log=$2
    echo "bench: $msg; last lines of its output:" >&2
    tail -n 15 "$log" | sed 's/^/  | /' >&2
    exit 1
}

# sigprof's default ring size for recordings that copy user stacks, which table 3 gives perf too
RING_PAGES=$("$SIGPROF" record --help 2>&1 | sed -n 's/.*--mmap-pages N.*(default [0-9]*; \([0-9]*\) when.*/\1/p')
[[ $RING_PAGES =~ ^[1-9][0-9]*$ ]] || die "cannot read the DWARF ring size from '$SIGPROF record --help'"

# ---------------------------------------------------------------- what can run
HAVE_PERF=0 HAVE_STRESS=0 HAVE_JQ=0
NOTES=()
if command -v perf >/dev/null 2>&1 && perf --version >/dev/null 2>&1; then
    HAVE_PERF=1
else
    NOTES+=("perf not found or not working: the perf modes and the perf bench workloads are skipped")
fi
if command -v stress-ng >/dev/null 2>&1; then
    HAVE_STRESS=1
else
    NOTES+=("stress-ng not found: the stress-ng workloads are skipped")
fi
if command -v jq >/dev/null 2>&1; then
    HAVE_JQ=1
else
    NOTES+=("jq not found: sigprof samples/lost of table 1 are read from its closing line instead of report --json;" \
        "table 2 (which needs meta.unsampled_hits) is skipped")
fi
((TRACE)) || NOTES+=("BENCH_TRACE=0: tables 2 and 3 (tracepoint collectors) skipped")
((TRACE && !DWARF)) && NOTES+=("BENCH_DWARF=0: table 3 (DWARF call graphs) skipped")
NOFP=$(realpath -m "$WORKLOADS_DIR/mutex_contend_nofp") # the workloads run in $TMP
if ((TRACE && DWARF)) && [[ ! -x $NOFP ]]; then
    NOTES+=("$NOFP not built ('make workloads'): table 3's report timing skips nofp-mutex")
fi

WORKLOADS=()
((HAVE_STRESS)) && WORKLOADS+=(timer)
((HAVE_PERF)) && WORKLOADS+=(futex)
MODES=(bare)
((HAVE_PERF)) && MODES+=(perf)
MODES+=(sigprof)

TWORKLOADS=()
if ((TRACE && HAVE_JQ)); then
    ((HAVE_STRESS)) && TWORKLOADS+=(ttimer sfutex)
    ((HAVE_PERF)) && TWORKLOADS+=(fhash)
fi

if ((${#WORKLOADS[@]} == 0)); then
    printf 'bench: %s\n' "${NOTES[@]}" >&2
    echo "bench: no workload can run; nothing measured" >&2
    exit 0
fi

# table-2 modes of a workload
tmodes() {
    local ml=(bare sp-all)
    ((HAVE_PERF)) && ml+=(perf-all perf-fit)
    case $1 in
        sfutex | fhash)
            ml+=(sp-futex sp-count)
            ((HAVE_PERF)) && ml+=(perf-trace perf-floor)
            ;;
    esac
    if [[ $1 == sfutex ]]; then
        ml+=(sp-sched)
        ((HAVE_PERF)) && ml+=(perf-sched perf-schedg)
    fi
    if ((DWARF)); then
        ml+=(sp-default sp-dwarf)
        ((HAVE_PERF)) && ml+=(perf-dwarf)
    fi
    echo "${ml[@]}"
}

# the modes of table 3 (run in table 2's rounds) and whether a mode is one
DMODES=(sp-default sp-dwarf perf-dwarf)
is_dmode() { [[ " ${DMODES[*]} " == *" $1 "* ]]; }

wl_name() {
    case $1 in
        ttimer | lttimer) echo timer ;;
        sfutex) echo sng-futex ;;
        fhash | lfhash) echo futex-hash ;;
        nofp) echo nofp-mutex ;;
        *) echo "$1" ;;
    esac
}

workload_cmd() {
    case $1 in
        timer) echo "stress-ng --timer 1 --timer-freq 100000 -t $SECONDS_PER_RUN --metrics-brief" ;;
        futex) echo "perf bench futex hash -r $SECONDS_PER_RUN -t 2" ;;
        ttimer | lttimer) echo "stress-ng --timer 1 -t $TRACE_SECONDS --metrics-brief" ;;
        sfutex) echo "stress-ng --futex 2 -t $TRACE_SECONDS --metrics-brief" ;;
        fhash | lfhash) echo "perf bench futex hash -r $TRACE_SECONDS -t 2" ;;
        nofp) echo "$NOFP 4 $((60000 * TRACE_SECONDS))" ;;
    esac
}

# the tracepoints of sigprof's signal, futex and sched collectors, for perf record; FIT=1 turns the
# callchain off on the events sigprof records without one
perf_tracepoints() { # FIT
    local nocg='' ev
    (($1)) && nocg=/call-graph=no/
    for ev in signal:signal_generate signal:signal_deliver "syscalls:sys_enter_rt_sigreturn$nocg" \
        syscalls:sys_enter_futex "syscalls:sys_exit_futex$nocg" sched:sched_switch "sched:sched_waking$nocg" \
        "sched:sched_wakeup_new$nocg" "sched:sched_migrate_task$nocg"; do
        printf -- '-e %s ' "$ev"
    done
}

# throughput from a workload's output (stdout+stderr, possibly mixed with the profiler's)
parse_ops() {
    case $1 in
        timer | ttimer | lttimer) awk '$2 == "metrc:" && $4 == "timer" && $5 ~ /^[0-9]+$/ { v = $(NF - 1) } END { if (v != "") print v }' "$2" ;;
        sfutex) awk '$2 == "metrc:" && $4 == "futex" && $5 ~ /^[0-9]+$/ { v = $(NF - 1) } END { if (v != "") print v }' "$2" ;;
        futex | fhash | lfhash) awk '$1 == "Averaged" && $3 == "operations/sec" { v = $2 } END { if (v != "") print v }' "$2" ;;
    esac
}

median() { # numbers as arguments
    printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) exit; if (NR % 2) print a[(NR + 1) / 2]; else printf "%.6g\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

now_ns() { date +%s%N; }

# samples, lost and THROTTLE records of a perf.data, from `perf report --stats` (which does not decode the
# samples: a fraction of a second on a 100 MB file).  Lost: perf >= 6.0 writes the kernel's lost counter
# of each event at the end (PERF_RECORD_LOST_SAMPLES, summed per event by --stats); PERF_RECORD_LOST
# records count the same losses as they happened.  Only when a file has LOST records but no per-event lost
# counters (an older perf wrote it) are the LOST records summed from `perf report -D` (slow).
perf_stats() { # FILE -> "samples lost throttle"
    local out s l t lr
    out=$(perf report -i "$1" --stats 2>/dev/null)
    read -r s l t lr < <(awk '
        /^Aggregated stats/ { agg = 1; next }
        / stats:$/ { agg = 0; next }
        agg && $1 == "SAMPLE" && $2 == "events:" { s = $3 }
        agg && $1 == "THROTTLE" && $2 == "events:" { t = $3 }
        agg && $1 == "LOST" && $2 == "events:" { lr = $3 }
        !agg && $1 == "LOST_SAMPLES" && $2 == "events:" { l += $3 }
        END { print s + 0, l + 0, t + 0, lr + 0 }' <<<"$out")
    if ((lr > 0 && l == 0)); then
        l=$(perf report -D -i "$1" 2>/dev/null | awk '/PERF_RECORD_LOST:/ { n = split($0, f, "lost:"); v += f[n] + 0 } END { print v + 0 }')
    fi
    echo "$s $l $t"
}

sigprof_field() { # FILE FIELD(samples|lost) RECORD-LOG
    if ((HAVE_JQ)); then
        "$SIGPROF" report -i "$1" --json | jq -r ".meta.$2"
    else
        sed -n 's/^sigprof: recorded .* \([0-9][0-9]*\) samples, \([0-9][0-9]*\) lost.*/\1 \2/p' "$3" |
            awk -v f="$2" '{ print (f == "samples") ? $1 : $2 }'
    fi
}

# samples lost unsampled_hits throttle_records, and the names of collectors that were not "ok"
sigprof_meta() { # FILE
    "$SIGPROF" report -i "$1" --json | jq -r '.meta | "\(.samples) \(.lost) \(.unsampled_hits) \(.throttle_records) \([.collectors[] | select(.status != "ok") | .name] | join(","))"'
}

# ---------------------------------------------------------------- table 1: one run
declare -A OPS SAMPLES LOST LASTFILE

run_one() { # WORKLOAD MODE ROUND
    local wl=$1 mode=$2 round=$3 cmd log data rc ops s='' l=''
    read -r -a cmd <<<"$(workload_cmd "$wl")"
    log=$TMP/$wl.$mode.$round.log
    data=$TMP/$wl.$mode.$round.data
    rc=0
    case $mode in
        bare) (cd "$TMP" && "${cmd[@]}") >"$log" 2>&1 || rc=$? ;;
        perf) (cd "$TMP" && perf record -g -F "$FREQ" -o "$data" -- "${cmd[@]}") >"$log" 2>&1 || rc=$? ;;
        sigprof) (cd "$TMP" && "$SIGPROF" record -e cpu -F "$FREQ" -o "$data" -- "${cmd[@]}") >"$log" 2>&1 || rc=$? ;;
    esac
    ((rc == 0)) || fail_log "$wl under $mode exited with status $rc" "$log"
    ops=$(parse_ops "$wl" "$log")
    [[ -n $ops ]] || fail_log "no throughput found in the output of $wl under $mode" "$log"
    OPS[$wl.$mode]+="$ops "
    case $mode in
        perf) read -r s l _ < <(perf_stats "$data") ;;
        sigprof)
            s=$(sigprof_field "$data" samples "$log")
            l=$(sigprof_field "$data" lost "$log")
            ;;
    esac
    if [[ $mode != bare ]]; then
        [[ $s =~ ^[0-9]+$ && $l =~ ^[0-9]+$ ]] || die "cannot read samples/lost of $data ($mode): '$s' '$l'"
        SAMPLES[$wl.$mode]+="$s "
        LOST[$wl.$mode]=$((${LOST[$wl.$mode]:-0} + l))
        [[ -n ${LASTFILE[$wl.$mode]:-} ]] && rm -f "${LASTFILE[$wl.$mode]}"
        LASTFILE[$wl.$mode]=$data
    fi
    printf '  round %d  %-6s %-8s %12s ops/s%s\n' "$round" "$wl" "$mode" "$ops" \
        "$([[ $mode == bare ]] || echo "   samples $s, lost $l")"
}

# ---------------------------------------------------------------- table 2: one run
declare -A TOPS TSAMPLES TLOST TUNS TTHR TMB TLAST
declare -a TNOTES=()

trun_one() { # WORKLOAD MODE ROUND
    local wl=$1 mode=$2 round=$3 cmd log data rc ops s='-' l=0 u='-' t='-' mb='-' bad='' tp
    read -r -a cmd <<<"$(workload_cmd "$wl")"
    log=$TMP/t.$wl.$mode.$round.log
    data=$TMP/t.$wl.$mode.$round.data
    rc=0
    case $mode in
        bare) (cd "$TMP" && "${cmd[@]}") >"$log" 2>&1 || rc=$? ;;
        sp-all) (cd "$TMP" && "$SIGPROF" record -e signal,futex,sched --call-graph fp -o "$data" -- "${cmd[@]}") >"$log" 2>&1 || rc=$? ;;
        sp-futex) (cd "$TMP" && "$SIGPROF" record -e futex --call-graph fp -o "$data" -- "${cmd[@]}") >"$log" 2>&1 || rc=$? ;;
        sp-sched) (cd "$TMP" && "$SIGPROF" record -e sched --call-graph fp -o "$data" -- "${cmd[@]}") >"$log" 2>&1 || rc=$? ;;
        sp-count) (cd "$TMP" && "$SIGPROF" record -e futex --futex count -o "$data" -- "${cmd[@]}") >"$log" 2>&1 || rc=$? ;;
        perf-floor)
            (cd "$TMP" && perf stat -x, -o "$data.stat" -e syscalls:sys_enter_futex,syscalls:sys_exit_futex -- \
                "${cmd[@]}") >"$log" 2>&1 || rc=$?
            ;;
        sp-default) (cd "$TMP" && "$SIGPROF" record -e signal,futex,sched -o "$data" -- "${cmd[@]}") >"$log" 2>&1 || rc=$? ;;
        sp-dwarf)
            (cd "$TMP" && "$SIGPROF" record -e signal,futex,sched --call-graph "dwarf,$DWARF_SIZE" -o "$data" -- "${cmd[@]}") \
                >"$log" 2>&1 || rc=$?
            ;;
        perf-dwarf)
            read -r -a tp <<<"$(perf_tracepoints 1)"
            (cd "$TMP" && perf record --call-graph "dwarf,$DWARF_SIZE" -m "$RING_PAGES" "${tp[@]}" -o "$data" -- "${cmd[@]}") \
                >"$log" 2>&1 || rc=$?
            ;;
        perf-all | perf-fit)
            read -r -a tp <<<"$(perf_tracepoints "$([[ $mode == perf-fit ]] && echo 1 || echo 0)")"
            (cd "$TMP" && perf record -g "${tp[@]}" -o "$data" -- "${cmd[@]}") >"$log" 2>&1 || rc=$?
            ;;
        sp-lock) (cd "$TMP" && "$SIGPROF" record -e lock -o "$data" -- "${cmd[@]}") >"$log" 2>&1 || rc=$? ;;
        sp-lockfx) (cd "$TMP" && "$SIGPROF" record -e lock,futex -o "$data" -- "${cmd[@]}") >"$log" 2>&1 || rc=$? ;;
        perf-lock) (cd "$TMP" && perf lock record -o "$data" -- "${cmd[@]}") >"$log" 2>&1 || rc=$? ;;
        perf-trace) (cd "$TMP" && perf trace -s -e futex -- "${cmd[@]}") >"$log" 2>&1 || rc=$? ;;
        perf-sched) (cd "$TMP" && perf sched record -o "$data" -- "${cmd[@]}") >"$log" 2>&1 || rc=$? ;;
        perf-schedg) (cd "$TMP" && perf sched record -g -o "$data" -- "${cmd[@]}") >"$log" 2>&1 || rc=$? ;;
    esac
    ((rc == 0)) || fail_log "$(wl_name "$wl") under $mode exited with status $rc" "$log"
    ops=$(parse_ops "$wl" "$log")
    [[ -n $ops ]] || fail_log "no throughput found in the output of $(wl_name "$wl") under $mode" "$log"
    TOPS[$wl.$mode]+="$ops "
    case $mode in
        sp-*)
            read -r s l u t bad < <(sigprof_meta "$data")
            [[ -n $bad ]] && TNOTES+=("$(wl_name "$wl") $mode round $round: collector(s) not recorded: $bad")
            ;;
        perf-floor)
            # the two counters' counts ("N,,syscalls:sys_enter_futex,..."): nothing is recorded, nothing lost
            s=$(awk -F, '$3 ~ /^syscalls:sys_(enter|exit)_futex$/ { v += $1 } END { print v + 0 }' "$data.stat")
            l=0
            rm -f "$data.stat"
            ;;
        perf-trace)
            # per thread: "NAME (TID), N events, P%"; losses: "LOST N events!"
            s=$(awk '/^ .* \([0-9]+\), [0-9]+ events, / { for (i = 1; i < NF; i++) if ($(i + 1) == "events,") v += $i } END { print v + 0 }' "$log")
            l=$(awk '/LOST [0-9]+ events!/ { for (i = 1; i < NF; i++) if ($i == "LOST") v += $(i + 1) } END { print v + 0 }' "$log")
            ;;
        perf-*) read -r s l t < <(perf_stats "$data") ;;
    esac
    if [[ $mode != bare ]]; then
        [[ $s =~ ^[0-9]+$ && $l =~ ^[0-9]+$ ]] || die "cannot read samples/lost of $(wl_name "$wl") under $mode: '$s' '$l'"
        TSAMPLES[$wl.$mode]+="$s "
        TLOST[$wl.$mode]=$((${TLOST[$wl.$mode]:-0} + l))
        [[ $u =~ ^[0-9]+$ ]] && TUNS[$wl.$mode]=$((${TUNS[$wl.$mode]:-0} + u))
        [[ $t =~ ^[0-9]+$ ]] && TTHR[$wl.$mode]=$((${TTHR[$wl.$mode]:-0} + t))
        if [[ -f $data ]]; then
            mb=$(awk -v b="$(stat -c %s "$data")" 'BEGIN { printf "%.1f", b / 1048576 }')
            TMB[$wl.$mode]+="$mb "
            # keep the last recording of sp-all and perf-all for the report timing, drop the others
            [[ -n ${TLAST[$wl.$mode]:-} ]] && rm -f "${TLAST[$wl.$mode]}"
            if [[ $mode == sp-all || $mode == perf-all || $mode == *-lock* ]]; then TLAST[$wl.$mode]=$data; else rm -f "$data"; fi
        fi
    fi
    printf '  round %d  %-10s %-11s %12s ops/s%s\n' "$round" "$(wl_name "$wl")" "$mode" "$ops" \
        "$([[ $mode == bare ]] || echo "   samples $s, lost $l, unsampled $u, throttle $t, $mb MB")"
}

# ---------------------------------------------------------------- header
rate_before=$(cat /proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null || echo '?')
echo "sigprof bench: $REPEAT rounds; table 1 ${SECONDS_PER_RUN}s per run, -F $FREQ;" \
    "table 2 $( ((${#TWORKLOADS[@]})) && echo "${TRACE_SECONDS}s per run" || echo skipped); report timed x$REPORT_REPEAT"
echo "  machine: $(nproc) CPUs, kernel $(uname -r); sigprof: $SIGPROF"
((HAVE_PERF)) && echo "  $(perf --version)"
((HAVE_STRESS)) && echo "  $(stress-ng --version | head -n 1)"
echo "  kernel.perf_event_max_sample_rate: $rate_before"
LOAD0=$(cut -d ' ' -f 1-3 /proc/loadavg)
echo "  load average at start: $LOAD0"
for n in "${NOTES[@]}"; do echo "  note: $n"; done
echo

# ---------------------------------------------------------------- table 1: throughput rounds
echo "table 1 throughput runs (cpu collector):"
for ((r = 1; r <= REPEAT; r++)); do
    nm=${#MODES[@]}
    for wl in "${WORKLOADS[@]}"; do
        for ((i = 0; i < nm; i++)); do
            run_one "$wl" "${MODES[$(((i + r - 1) % nm))]}" "$r"
        done
    done
done
LOAD1=$(cut -d ' ' -f 1-3 /proc/loadavg)
echo "  load average after table 1: $LOAD1"
echo

# ---------------------------------------------------------------- table 2: throughput rounds
if ((${#TWORKLOADS[@]})); then
    echo "table 2 throughput runs (tracepoint collectors):"
    for ((r = 1; r <= REPEAT; r++)); do
        for wl in "${TWORKLOADS[@]}"; do
            read -r -a tm <<<"$(tmodes "$wl")"
            nm=${#tm[@]}
            for ((i = 0; i < nm; i++)); do
                trun_one "$wl" "${tm[$(((i + r - 1) % nm))]}" "$r"
            done
        done
    done
    LOAD2=$(cut -d ' ' -f 1-3 /proc/loadavg)
    echo "  load average after table 2: $LOAD2"
    echo
fi

# ---------------------------------------------------------------- report time
declare -A RTIME TRTIME
time_cmd_ms() { # CMD... -> median wall ms over REPORT_REPEAT timed runs (one untimed warm-up)
    local t0 t1 i times=()
    "$@" >/dev/null 2>"$TMP/report.err" || fail_log "'$*' failed" "$TMP/report.err"
    for ((i = 0; i < REPORT_REPEAT; i++)); do
        t0=$(now_ns)
        "$@" >/dev/null 2>"$TMP/report.err" || fail_log "'$*' failed" "$TMP/report.err"
        t1=$(now_ns)
        times+=("$(((t1 - t0) / 1000000))")
    done
    median "${times[@]}"
}
kb() { echo $(($(stat -c %s "$1") / 1024)); }
echo "report time (median of $REPORT_REPEAT, ms):"
for wl in "${WORKLOADS[@]}"; do
    if ((HAVE_PERF)); then
        RTIME[$wl.perf]=$(time_cmd_ms perf report --stdio -i "${LASTFILE[$wl.perf]}")
    fi
    RTIME[$wl.sigprof]=$(time_cmd_ms "$SIGPROF" report -i "${LASTFILE[$wl.sigprof]}")
    printf '  table 1 %-10s perf report %s ms, sigprof report %s ms  (files: perf %s KB, sigprof %s KB)\n' "$wl" \
        "${RTIME[$wl.perf]:--}" "${RTIME[$wl.sigprof]}" \
        "$( ((HAVE_PERF)) && kb "${LASTFILE[$wl.perf]}" || echo -)" "$(kb "${LASTFILE[$wl.sigprof]}")"
done
for wl in "${TWORKLOADS[@]}"; do
    ((HAVE_PERF)) || break
    TRTIME[$wl.perf-all]=$(time_cmd_ms perf report --stdio -i "${TLAST[$wl.perf-all]}")
    TRTIME[$wl.sp-all]=$(time_cmd_ms "$SIGPROF" report -i "${TLAST[$wl.sp-all]}")
    printf '  table 2 %-10s perf report %s ms, sigprof report %s ms  (files: perf-all %s KB, sp-all %s KB)\n' \
        "$(wl_name "$wl")" "${TRTIME[$wl.perf-all]}" "${TRTIME[$wl.sp-all]}" \
        "$(kb "${TLAST[$wl.perf-all]}")" "$(kb "${TLAST[$wl.sp-all]}")"
done

# table 3: a DWARF cpu recording of each workload by both tools, at the same rate: report time, samples,
# and how the stacks end
declare -A DSAMPLES DRTIME DMB DUNMAPPED DUNNAMED DREASON
# "unmapped unnamed reason": shares of the samples whose outermost frame is in no mapping, is mapped but has
# no symbol, and (sigprof) whose stack holds an [unwind: reason] frame; sigprof's outermost frame is the last
# one before that reason (perf ends such a stack there without one)
perf_stack_ends() { # FILE
    perf script -i "$1" -F ip,sym,dso 2>/dev/null | awk 'BEGIN { RS = ""; FS = "\n" }
        { n++; k = split($NF, f, " "); if (f[2] == "[unknown]") { if (f[k] == "([unknown])") u++; else m++ } }
        END { if (n) printf "%.4f %.4f -\n", u / n, m / n; else print "- - -" }'
}
sigprof_stack_ends() { # FILE
    "$SIGPROF" report --json -i "$1" | jq -r '
        [.stacks[] | { c: .count, last: ([.frames[] | select(.sym | startswith("[unwind: ") | not)][-1] // {}),
                       reason: any(.frames[]; .sym | startswith("[unwind: ")) }] as $s
        | ([$s[].c] | add // 0) as $n
        | def share(f): ([$s[] | select(f) | .c] | add // 0) / $n;
          if $n == 0 then "- - -"
          else "\(share(.last.dso == "[unknown]")) \(share(.last.dso != "[unknown]" and .last.offset != null)) \(share(.reason))"
          end'
}
dwarf_pair() { # WORKLOAD
    local wl=$1 cmd sp pf log rc=0 n u m r
    read -r -a cmd <<<"$(workload_cmd "$wl")"
    sp=$TMP/d.$wl.sigprof.data pf=$TMP/d.$wl.perf.data log=$TMP/d.$wl.log
    (cd "$TMP" && "$SIGPROF" record -e cpu -F "$DWARF_FREQ" --call-graph "dwarf,$DWARF_SIZE" -o "$sp" -- "${cmd[@]}") \
        >"$log" 2>&1 || rc=$?
    ((rc == 0)) || fail_log "$(wl_name "$wl") under sigprof record -e cpu --call-graph dwarf exited with status $rc" "$log"
    (cd "$TMP" && perf record -F "$DWARF_FREQ" --call-graph "dwarf,$DWARF_SIZE" -o "$pf" -- "${cmd[@]}") >"$log" 2>&1 || rc=$?
    ((rc == 0)) || fail_log "$(wl_name "$wl") under perf record --call-graph dwarf exited with status $rc" "$log"
    DSAMPLES[$wl.sigprof]=$(sigprof_field "$sp" samples "$log")
    read -r n _ < <(perf_stats "$pf")
    DSAMPLES[$wl.perf]=$n
    DMB[$wl.sigprof]=$(awk -v b="$(stat -c %s "$sp")" 'BEGIN { printf "%.1f", b / 1048576 }')
    DMB[$wl.perf]=$(awk -v b="$(stat -c %s "$pf")" 'BEGIN { printf "%.1f", b / 1048576 }')
    DRTIME[$wl.perf]=$(time_cmd_ms perf report --stdio -i "$pf")
    DRTIME[$wl.sigprof]=$(time_cmd_ms "$SIGPROF" report -i "$sp")
    read -r u m r < <(perf_stack_ends "$pf")
    DUNMAPPED[$wl.perf]=$u DUNNAMED[$wl.perf]=$m DREASON[$wl.perf]=$r
    read -r u m r < <(sigprof_stack_ends "$sp")
    DUNMAPPED[$wl.sigprof]=$u DUNNAMED[$wl.sigprof]=$m DREASON[$wl.sigprof]=$r
    rm -f "$sp" "$pf"
    printf '  table 3 %-10s perf report %s ms, sigprof report %s ms  (samples: perf %s, sigprof %s)\n' \
        "$(wl_name "$wl")" "${DRTIME[$wl.perf]}" "${DRTIME[$wl.sigprof]}" "${DSAMPLES[$wl.perf]}" \
        "${DSAMPLES[$wl.sigprof]}"
}
DWL=()
if ((${#TWORKLOADS[@]} && DWARF && HAVE_PERF)); then
    DWL=("${TWORKLOADS[@]}")
    [[ -x $NOFP ]] && DWL+=(nofp)
fi
for wl in "${DWL[@]}"; do
    dwarf_pair "$wl"
done
echo

# ---------------------------------------------------------------- table 1
calc() { awk "BEGIN { printf $1 }"; }
rng() { printf '%s\n' "$@" | sort -g | awk -v f="$FMT" 'NR == 1 { lo = $1 } { hi = $1 } END { printf f "-" f, lo, hi }'; }
declare -A RATIO TRATIO
echo "table 1: the cpu collector against perf record -g, -F $FREQ, ${SECONDS_PER_RUN}s runs"
printf '%-7s %-8s %13s %17s %7s %13s %8s %8s %6s %9s\n' workload mode "ops/s(med)" "ops/s(min-max)" ratio \
    "ratio(min-max)" lost-thr samples lost report-ms
for wl in "${WORKLOADS[@]}"; do
    read -r -a bare_ops <<<"${OPS[$wl.bare]}"
    for mode in "${MODES[@]}"; do
        read -r -a ops <<<"${OPS[$wl.$mode]}"
        m=$(median "${ops[@]}")
        range=$(FMT=%.0f rng "${ops[@]}")
        if [[ $mode == bare ]]; then
            printf '%-7s %-8s %13.0f %17s %7s %13s %8s %8s %6s %9s\n' "$wl" "$mode" "$m" "$range" 1.000 - - - - -
            continue
        fi
        # the ratio of each round pairs the tool's run with the bare run of the same round
        ratios=()
        for ((i = 0; i < ${#ops[@]}; i++)); do
            ratios+=("$(calc "\"%.4f\", ${ops[$i]} / ${bare_ops[$i]}")")
        done
        RATIO[$wl.$mode]=$(median "${ratios[@]}")
        rrange=$(FMT=%.2f rng "${ratios[@]}")
        # shellcheck disable=SC2086
        printf '%-7s %-8s %13.0f %17s %7.3f %13s %7.1f%% %8.0f %6s %9s\n' "$wl" "$mode" "$m" "$range" \
            "${RATIO[$wl.$mode]}" "$rrange" "$(calc "\"%.1f\", 100 * (1 - ${RATIO[$wl.$mode]})")" \
            "$(median ${SAMPLES[$wl.$mode]})" "${LOST[$wl.$mode]}" "${RTIME[$wl.$mode]}"
    done
done
echo "ratio: median over the $REPEAT rounds of (ops/s under the tool / bare ops/s of the same round);" \
    "lost-thr = 1 - ratio; samples: median per run;"
echo "lost: sum over the $REPEAT runs; report-ms: median wall time of the text report of the last run's file"
echo

# ---------------------------------------------------------------- tables 2 and 3
pct() { # FRACTION or - -> percent
    if [[ $1 == - ]]; then echo -; else calc "\"%.1f%%\", 100 * $1"; fi
}
unknown_share() { # WORKLOAD.TOOL -> unmapped + unnamed, or -
    if [[ ${DUNMAPPED[$1]} == - ]]; then echo -; else calc "\"%.4f\", ${DUNMAPPED[$1]} + ${DUNNAMED[$1]}"; fi
}
print_dwarf_pairs() {
    ((${#DWL[@]})) || return 0
    echo "table 3, report and unwinding: -e cpu (perf: its default cpu event) -F $DWARF_FREQ --call-graph dwarf,$DWARF_SIZE," \
        "one recording per tool"
    printf '%-10s %-8s %8s %7s %10s %9s %9s %9s %9s\n' workload tool samples MB report-ms unmapped unnamed unknown \
        unwind-why
    local wl tool
    for wl in "${DWL[@]}"; do
        for tool in perf sigprof; do
            printf '%-10s %-8s %8s %7s %10s %9s %9s %9s %9s\n' "$(wl_name "$wl")" "$tool" "${DSAMPLES[$wl.$tool]}" \
                "${DMB[$wl.$tool]}" "${DRTIME[$wl.$tool]}" "$(pct "${DUNMAPPED[$wl.$tool]}")" \
                "$(pct "${DUNNAMED[$wl.$tool]}")" \
                "$(pct "$(unknown_share "$wl.$tool")")" \
                "$(pct "${DREASON[$wl.$tool]}")"
        done
    done
    echo "unmapped: samples whose outermost frame is in no mapping; unnamed: mapped, without a symbol; unknown:"
    echo "their sum (what perf prints as [unknown]); unwind-why: sigprof stacks holding an [unwind: reason] frame"
}
THEAD=$(printf '%-10s %-11s %11s %17s %6s %11s %8s %9s %6s %9s %8s %7s %9s' workload mode "ops/s(med)" \
    "ops/s(min-max)" ratio ratio-range lost-thr samples lost unsampled throttle MB report-ms)
print_trow() { # WORKLOAD MODE
    local wl=$1 mode=$2 ops bare_ops m range ratios rrange mb i
    read -r -a bare_ops <<<"${TOPS[$wl.bare]}"
    read -r -a ops <<<"${TOPS[$wl.$mode]}"
    m=$(median "${ops[@]}")
    range=$(FMT=%.0f rng "${ops[@]}")
    if [[ $mode == bare ]]; then
        printf '%-10s %-11s %11.0f %17s %6s %11s %8s %9s %6s %9s %8s %7s %9s\n' "$(wl_name "$wl")" "$mode" \
            "$m" "$range" 1.000 - - - - - - - -
        return
    fi
    ratios=()
    for ((i = 0; i < ${#ops[@]}; i++)); do
        ratios+=("$(calc "\"%.4f\", ${ops[$i]} / ${bare_ops[$i]}")")
    done
    TRATIO[$wl.$mode]=$(median "${ratios[@]}")
    rrange=$(FMT=%.2f rng "${ratios[@]}")
    # shellcheck disable=SC2086
    mb=$([[ -n ${TMB[$wl.$mode]:-} ]] && median ${TMB[$wl.$mode]} || echo -)
    # shellcheck disable=SC2086
    printf '%-10s %-11s %11.0f %17s %6.3f %11s %7.1f%% %9.0f %6s %9s %8s %7s %9s\n' "$(wl_name "$wl")" "$mode" \
        "$m" "$range" "${TRATIO[$wl.$mode]}" "$rrange" "$(calc "\"%.1f\", 100 * (1 - ${TRATIO[$wl.$mode]})")" \
        "$(median ${TSAMPLES[$wl.$mode]})" "${TLOST[$wl.$mode]}" "${TUNS[$wl.$mode]:--}" \
        "${TTHR[$wl.$mode]:--}" "$mb" "${TRTIME[$wl.$mode]:--}"
}
if ((${#TWORKLOADS[@]})); then
    echo "table 2: the tracepoint collectors against perf on the same tracepoints, ${TRACE_SECONDS}s runs"
    echo "$THEAD"
    for wl in "${TWORKLOADS[@]}"; do
        read -r -a tm <<<"$(tmodes "$wl")"
        for mode in "${tm[@]}"; do
            is_dmode "$mode" || print_trow "$wl" "$mode"
        done
    done
    echo "ratio, lost-thr: as in table 1; samples (perf trace: events counted), MB: median per run;" \
        "lost, unsampled, throttle: sums over the $REPEAT runs;"
    echo "unsampled: sigprof's meta.unsampled_hits (hits the kernel counted but did not sample: exact totals minus samples);" \
        "throttle: THROTTLE records; report-ms: as in table 1, on the last run's file"
    for n in "${TNOTES[@]}"; do echo "note: $n"; done
    echo
fi
if ((${#TWORKLOADS[@]} && DWARF)); then
    echo "table 3: DWARF call graphs against perf record --call-graph dwarf,$DWARF_SIZE on the same tracepoints," \
        "${TRACE_SECONDS}s runs (table 2's rounds)"
    echo "$THEAD"
    for wl in "${TWORKLOADS[@]}"; do
        for mode in bare "${DMODES[@]}"; do
            [[ -n ${TOPS[$wl.$mode]:-} ]] && print_trow "$wl" "$mode"
        done
    done
    echo "columns as in table 2; the bare rows are table 2's"
    echo
    print_dwarf_pairs
    echo
fi

# ---------------------------------------------------------------- table 4: storage (issue 13)
STORAGE=${BENCH_STORAGE:-1}
STORAGE_SECONDS=${BENCH_STORAGE_SECONDS:-$TRACE_SECONDS}
[[ $STORAGE =~ ^[01]$ && $STORAGE_SECONDS =~ ^[1-9][0-9]*$ ]] ||
    die "BENCH_STORAGE must be 0 or 1 and BENCH_STORAGE_SECONDS a positive integer"
SWL=()
if ((STORAGE)); then
    ((HAVE_STRESS)) && SWL+=(ttimer)
    ((HAVE_PERF)) && SWL+=(fhash)
fi
SMODES=(bare sp-zstd sp-plain)
((HAVE_PERF)) && SMODES+=(perf-g)
declare -A SOPS SMB SRATIO
storage_cmd() {
    case $1 in
        ttimer) echo "stress-ng --timer 1 -t $STORAGE_SECONDS --metrics-brief" ;;
        fhash) echo "perf bench futex hash -r $STORAGE_SECONDS -t 2" ;;
    esac
}
run_storage() { # WORKLOAD MODE ROUND
    local wl=$1 mode=$2 round=$3 cmd log data rc=0 ops mb=''
    read -r -a cmd <<<"$(storage_cmd "$wl")"
    log=$TMP/s.$wl.$mode.$round.log
    data=$TMP/s.$wl.$mode.$round.data
    case $mode in
        bare) (cd "$TMP" && "${cmd[@]}") >"$log" 2>&1 || rc=$? ;;
        sp-zstd) (cd "$TMP" && "$SIGPROF" record -o "$data" -- "${cmd[@]}") >"$log" 2>&1 || rc=$? ;;
        sp-plain) (cd "$TMP" && "$SIGPROF" record --no-compress -o "$data" -- "${cmd[@]}") >"$log" 2>&1 || rc=$? ;;
        perf-g) (cd "$TMP" && perf record -g -o "$data" -- "${cmd[@]}") >"$log" 2>&1 || rc=$? ;;
    esac
    ((rc == 0)) || fail_log "$wl under $mode exited with status $rc" "$log"
    ops=$(parse_ops "$wl" "$log")
    [[ -n $ops ]] || fail_log "no throughput found in the output of $wl under $mode" "$log"
    SOPS[$wl.$mode.$round]=$ops
    if [[ $mode != bare ]]; then
        mb=$(awk -v b="$(stat -c %s "$data")" 'BEGIN { printf "%.2f", b / 1048576 }')
        SMB[$wl.$mode]+="$mb "
        rm -f "$data" "$data.old"
    fi
    printf '  round %d  %-10s %-8s %12s ops/s%s\n' "$round" "$(wl_name "$wl")" "$mode" "$ops" "${mb:+   $mb MB}"
}
if ((${#SWL[@]})); then
    echo "table 4: storage (issue 13): default compressed recordings against --no-compress and perf record -g," \
        "${STORAGE_SECONDS}s runs"
    for ((round = 1; round <= REPEAT; round++)); do
        for wl in "${SWL[@]}"; do
            n=${#SMODES[@]}
            for ((i = 0; i < n; i++)); do
                run_storage "$wl" "${SMODES[$(((i + round) % n))]}" "$round"
            done
        done
    done
    printf '%-10s %-8s %14s %7s %8s\n' workload mode "ops/s(median)" ratio MB
    for wl in "${SWL[@]}"; do
        for mode in "${SMODES[@]}"; do
            opsl=() ratios=()
            for ((round = 1; round <= REPEAT; round++)); do
                opsl+=("${SOPS[$wl.$mode.$round]}")
                ratios+=("$(calc "\"%.4f\", ${SOPS[$wl.$mode.$round]} / ${SOPS[$wl.bare.$round]}")")
            done
            SRATIO[$wl.$mode]=$(median "${ratios[@]}")
            # shellcheck disable=SC2086
            printf '%-10s %-8s %14s %7s %8s\n' "$(wl_name "$wl")" "$mode" "$(median "${opsl[@]}")" \
                "${SRATIO[$wl.$mode]}" "$([[ $mode == bare ]] && echo - || median ${SMB[$wl.$mode]})"
        done
    done
    echo
fi

# ---------------------------------------------------------------- targets
margin() { # SP PF -> "sigprof X points better|worse"
    calc "\"%s\", ($1 >= $2) ? sprintf(\"sigprof %.1f points better\", 100 * ($1 - $2)) : sprintf(\"sigprof %.1f points worse\", 100 * ($2 - $1))"
}
verdict() { calc "\"%s\", ($1 >= $2) ? \"PASS\" : \"MISS\""; }
lostpct() { calc "\"%.1f%%\", 100 * (1 - $1)"; }

echo "targets, table 1 (cpu collector):"
for wl in "${WORKLOADS[@]}"; do
    if ((HAVE_PERF)); then
        sp=${RATIO[$wl.sigprof]} pf=${RATIO[$wl.perf]}
        printf '  [%s] %-6s sigprof overhead <= perf overhead: throughput lost sigprof %s, perf %s (%s)\n' \
            "$(verdict "$sp" "$pf")" "$wl" "$(lostpct "$sp")" "$(lostpct "$pf")" "$(margin "$sp" "$pf")"
    else
        echo "  [SKIP] $wl    sigprof overhead <= perf overhead: no perf"
    fi
done
for wl in "${WORKLOADS[@]}"; do
    l=${LOST[$wl.sigprof]}
    # shellcheck disable=SC2086
    printf '  [%s] %-6s 0 lost at -F %s: sigprof lost %s records over %s runs (perf lost %s)\n' \
        "$([[ $l == 0 ]] && echo PASS || echo MISS)" "$wl" "$FREQ" "$l" "$REPEAT" "${LOST[$wl.perf]:--}"
done
pair() { # WORKLOAD SP-MODE PERF-MODE
    local sp=${TRATIO[$1.$2]} pf=${TRATIO[$1.$3]}
    printf '  [%s] %-10s %-11s >= %-11s throughput kept %.3f vs %.3f, lost %s vs %s (%s)\n' \
        "$(verdict "$sp" "$pf")" "$(wl_name "$1")" "$2" "$3" "$sp" "$pf" "$(lostpct "$sp")" "$(lostpct "$pf")" \
        "$(margin "$sp" "$pf")"
}
report_target() { # LABEL PERF-MS SIGPROF-MS
    local pr=$2 sr=$3 x
    ((sr > 0)) || sr=1
    x=$(calc "\"%.2f\", $pr / $sr")
    printf '  [%s] %-10s report >= 3x faster than perf report: %sx (perf %s ms, sigprof %s ms; %s)\n' \
        "$(calc "\"%s\", ($x >= 3) ? \"PASS\" : \"MISS\"")" "$1" "$x" "$pr" "$3" \
        "$(calc "\"%s\", ($x >= 3) ? sprintf(\"%.2fx beyond the target\", $x - 3) : sprintf(\"%.2fx short\", 3 - $x)")"
}
for wl in "${WORKLOADS[@]}"; do
    if ((HAVE_PERF)); then
        report_target "$wl" "${RTIME[$wl.perf]}" "${RTIME[$wl.sigprof]}"
    else
        echo "  [SKIP] $wl    report >= 3x faster than perf report: no perf"
    fi
done

if ((${#TWORKLOADS[@]})); then
    echo
    echo "targets, table 2 (tracepoint collectors, frame-pointer stacks; issue 3: lower overhead than perf for" \
        "the same information, no lost records):"
    if ((HAVE_PERF)); then
        for wl in "${TWORKLOADS[@]}"; do
            pair "$wl" sp-all perf-all
            pair "$wl" sp-all perf-fit
        done
        for wl in "${TWORKLOADS[@]}"; do
            [[ -n ${TRATIO[$wl.sp-futex]:-} ]] && pair "$wl" sp-futex perf-trace
        done
        # --futex count, the light mode: within 1.15x of the floor of any tracepoint-based mode, the two futex
        # tracepoints counted per task by perf stat (issue 22): its cost at most 1.15 times the floor's
        for wl in "${TWORKLOADS[@]}"; do
            [[ -n ${TRATIO[$wl.sp-count]:-} && -n ${TRATIO[$wl.perf-floor]:-} ]] || continue
            sp=${TRATIO[$wl.sp-count]} pf=${TRATIO[$wl.perf-floor]}
            printf '  [%s] %-10s %-11s cost within 1.15x of %-10s throughput kept %.3f vs %.3f: cost %.3f vs %.3f (%sx)\n' \
                "$(calc "\"%s\", ((1 - $sp) <= 1.15 * (1 - $pf) ? \"PASS\" : \"MISS\")")" "$(wl_name "$wl")" sp-count \
                perf-floor "$sp" "$pf" "$(calc "\"%.3f\", 1 - $sp")" "$(calc "\"%.3f\", 1 - $pf")" \
                "$(calc "\"%.2f\", ((1 - $pf) > 0 ? (1 - $sp) / (1 - $pf) : 0)")"
        done
        for wl in "${TWORKLOADS[@]}"; do
            if [[ -n ${TRATIO[$wl.sp-sched]:-} ]]; then
                pair "$wl" sp-sched perf-sched
                pair "$wl" sp-sched perf-schedg
            fi
        done
    else
        echo "  [SKIP] overhead against perf: no perf"
    fi
    # what perf lost on the same workload, beside each sigprof mode
    perf_lost_of() { # WORKLOAD SP-MODE
        local m out=''
        case $2 in
            sp-all) m='perf-all perf-fit' ;;
            sp-futex) m='perf-trace' ;;
            sp-sched) m='perf-sched perf-schedg' ;;
            sp-default | sp-dwarf) m='perf-dwarf' ;;
        esac
        for m in $m; do
            [[ -n ${TLOST[$1.$m]:-} ]] && out+="${out:+, }$m ${TLOST[$1.$m]}"
        done
        echo "${out:-no perf}"
    }
    for wl in "${TWORKLOADS[@]}"; do
        read -r -a tm <<<"$(tmodes "$wl")"
        for mode in "${tm[@]}"; do
            if [[ $mode != sp-* || $mode == sp-count ]] || is_dmode "$mode"; then continue; fi
            l=${TLOST[$wl.$mode]}
            printf '  [%s] %-10s %-11s no lost records: %s lost over %s runs (perf lost: %s)\n' \
                "$([[ $l == 0 ]] && echo PASS || echo MISS)" "$(wl_name "$wl")" "$mode" "$l" "$REPEAT" \
                "$(perf_lost_of "$wl" "$mode")"
        done
    done
    for wl in "${TWORKLOADS[@]}"; do
        read -r -a tm <<<"$(tmodes "$wl")"
        for mode in "${tm[@]}"; do
            if [[ $mode != sp-* || $mode == sp-count ]] || is_dmode "$mode"; then continue; fi
            u=${TUNS[$wl.$mode]:-0}
            printf '  [%s] %-10s %-11s every hit sampled: %s unsampled hits over %s runs, %s THROTTLE records\n' \
                "$([[ $u == 0 ]] && echo PASS || echo MISS)" "$(wl_name "$wl")" "$mode" "$u" "$REPEAT" \
                "${TTHR[$wl.$mode]:-0}"
        done
    done
    if ((HAVE_PERF)); then
        for wl in "${TWORKLOADS[@]}"; do
            report_target "$(wl_name "$wl")" "${TRTIME[$wl.perf-all]}" "${TRTIME[$wl.sp-all]}"
        done
    fi
fi

if ((${#TWORKLOADS[@]} && DWARF)); then
    echo
    echo "targets, table 3 (DWARF call graphs; issue 4: record overhead no larger than perf --call-graph dwarf's," \
        "report >= 3x faster, no more stacks ending in [unknown]):"
    if ((HAVE_PERF)); then
        for wl in "${TWORKLOADS[@]}"; do
            pair "$wl" sp-dwarf perf-dwarf
            pair "$wl" sp-default perf-dwarf
        done
    else
        echo "  [SKIP] overhead against perf: no perf"
    fi
    for wl in "${TWORKLOADS[@]}"; do
        l=${TLOST[$wl.sp-default]}
        printf '  [%s] %-10s %-11s no lost records at the defaults: %s lost over %s runs (sp-dwarf %s, perf lost: %s)\n' \
            "$([[ $l == 0 ]] && echo PASS || echo MISS)" "$(wl_name "$wl")" sp-default "$l" "$REPEAT" \
            "${TLOST[$wl.sp-dwarf]}" "$(perf_lost_of "$wl" sp-default)"
    done
    for wl in "${DWL[@]}"; do
        report_target "$(wl_name "$wl")" "${DRTIME[$wl.perf]}" "${DRTIME[$wl.sigprof]}"
    done
    for wl in "${DWL[@]}"; do
        if [[ ${DUNMAPPED[$wl.sigprof]} == - || ${DUNMAPPED[$wl.perf]} == - ]]; then
            printf '  [SKIP] %-10s stacks ending in [unknown]: no samples\n' "$(wl_name "$wl")"
            continue
        fi
        spu=$(unknown_share "$wl.sigprof")
        pfu=$(unknown_share "$wl.perf")
        printf '  [%s] %-10s stacks ending in [unknown] <= perf: sigprof %s, perf %s (unmapped %s vs %s; sigprof %s with an [unwind:] reason)\n' \
            "$(verdict "$pfu" "$spu")" "$(wl_name "$wl")" "$(pct "$spu")" "$(pct "$pfu")" \
            "$(pct "${DUNMAPPED[$wl.sigprof]}")" "$(pct "${DUNMAPPED[$wl.perf]}")" "$(pct "${DREASON[$wl.sigprof]}")"
    done
fi

if ((${#SWL[@]})); then
    echo
    echo "targets, table 4 (issue 13: a default recording no more than 1.5x perf record -g's file, record overhead" \
        "not worse than before compression):"
    for wl in "${SWL[@]}"; do
        # shellcheck disable=SC2086
        zmb=$(median ${SMB[$wl.sp-zstd]})
        if ((HAVE_PERF)); then
            # shellcheck disable=SC2086
            pmb=$(median ${SMB[$wl.perf-g]})
            x=$(calc "\"%.2f\", $zmb / ($pmb > 0 ? $pmb : 1)")
            printf '  [%s] %-10s sp-zstd file <= 1.5x perf-g: %s MB vs %s MB, %sx (%s)\n' \
                "$(calc "\"%s\", ($x <= 1.5) ? \"PASS\" : \"MISS\"")" "$(wl_name "$wl")" "$zmb" "$pmb" "$x" \
                "$(calc "\"%s\", ($x <= 1.5) ? sprintf(\"%.2fx within\", 1.5 - $x) : sprintf(\"%.2fx over\", $x - 1.5)")"
        fi
        sp=${SRATIO[$wl.sp-zstd]} pl=${SRATIO[$wl.sp-plain]}
        # shellcheck disable=SC2086
        printf '  [%s] %-10s sp-zstd throughput >= sp-plain: kept %.3f vs %.3f; files %s vs %s MB\n' \
            "$(verdict "$sp" "$pl")" "$(wl_name "$wl")" "$sp" "$pl" "$zmb" "$(median ${SMB[$wl.sp-plain]})"
    done
fi

# ---------------------------------------------------------------- table 5: the lock collector
# Its own rounds after the others (BENCH_LOCK=0 skips it; needs perf, jq and lock:contention_begin), run by
# trun_one and printed like table 2:
#   workloads  futex-hash (perf bench futex hash -r S -t 2: the bucket locks) and timer (stress-ng --timer 1 -t S),
#              with bare runs of their own
#   modes      sp-lock   ./sigprof record -e lock -o F -- W (every contention, kernel + fp user stacks)
#              perf-lock perf lock record -o F -- W (the same two tracepoints, every hit, callchains)
#              sp-lockfx ./sigprof record -e lock,futex -o F -- W (what joins contentions to futex words)
#   also       the kernel's count of contentions (sigprof's lock_summary.contentions, median), and report time
#              on the last round's files: ./sigprof report against perf lock report and perf lock contention
if ((LOCK && HAVE_PERF && HAVE_JQ)) && [[ -d /sys/kernel/tracing/events/lock ]]; then
    LWORKLOADS=(lfhash)
    ((HAVE_STRESS)) && LWORKLOADS+=(lttimer)
    LMODES=(bare sp-lock perf-lock sp-lockfx)
    declare -A LCONT
    echo
    echo "table 5 throughput runs (lock collector):"
    for ((r = 1; r <= REPEAT; r++)); do
        for wl in "${LWORKLOADS[@]}"; do
            for ((i = 0; i < ${#LMODES[@]}; i++)); do
                mode=${LMODES[$(((i + r - 1) % ${#LMODES[@]}))]}
                trun_one "$wl" "$mode" "$r"
                [[ $mode == sp-* ]] && LCONT[$wl.$mode]+="$("$SIGPROF" report -i "${TLAST[$wl.$mode]}" --json |
                    jq -r '.lock_summary.contentions') "
            done
        done
    done
    for wl in "${LWORKLOADS[@]}"; do
        TRTIME[$wl.sp-lock]=$(time_cmd_ms "$SIGPROF" report -i "${TLAST[$wl.sp-lock]}")
        TRTIME[$wl.sp-lockfx]=$(time_cmd_ms "$SIGPROF" report -i "${TLAST[$wl.sp-lockfx]}")
        TRTIME[$wl.perf-lock]=$(time_cmd_ms perf lock report -i "${TLAST[$wl.perf-lock]}")
        TRTIME[$wl.perf-contention]=$(time_cmd_ms perf lock contention -i "${TLAST[$wl.perf-lock]}")
    done
    echo
    echo "table 5: the lock collector against perf lock record on the same tracepoints, ${TRACE_SECONDS}s runs"
    echo "$THEAD"
    for wl in "${LWORKLOADS[@]}"; do
        for mode in "${LMODES[@]}"; do
            print_trow "$wl" "$mode"
        done
    done
    echo "columns as in table 2; report-ms of perf-lock: perf lock report"
    for wl in "${LWORKLOADS[@]}"; do
        # shellcheck disable=SC2086
        echo "$(wl_name "$wl"): contentions the kernel counted (median per run): sp-lock $(median ${LCONT[$wl.sp-lock]})," \
            "sp-lockfx $(median ${LCONT[$wl.sp-lockfx]})"
    done
    echo
    echo "targets, table 5 (lock collector: overhead no larger than perf lock record's, no lost records, report time):"
    for wl in "${LWORKLOADS[@]}"; do
        pair "$wl" sp-lock perf-lock
        l=${TLOST[$wl.sp-lock]}
        printf '  [%s] %-10s %-11s no lost records: %s lost over %s runs (perf lock record lost %s)\n' \
            "$([[ $l == 0 ]] && echo PASS || echo MISS)" "$(wl_name "$wl")" sp-lock "$l" "$REPEAT" \
            "${TLOST[$wl.perf-lock]}"
        sr=${TRTIME[$wl.sp-lock]} pr=${TRTIME[$wl.perf-contention]}
        printf '  [%s] %-10s sigprof report <= perf lock contention: %s ms vs %s ms (perf lock report %s ms)\n' \
            "$( ((sr <= pr)) && echo PASS || echo MISS)" "$(wl_name "$wl")" "$sr" "$pr" "${TRTIME[$wl.perf-lock]}"
    done
elif ((LOCK)); then
    echo
    echo "table 5 (lock collector) skipped: it needs perf, jq and the lock:contention_begin tracepoint"
fi

rate_after=$(cat /proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null || echo '?')
if [[ $rate_after != "$rate_before" ]]; then
    echo
    echo "note: the kernel lowered perf_event_max_sample_rate from $rate_before to $rate_after during the run" \
        "(sampling interrupts took too long); later runs sampled at a lower rate"
fi
echo
echo "load average: at start $LOAD0, after table 1 $LOAD1${LOAD2:+, after table 2 $LOAD2}; now $(cut -d ' ' -f 1-3 /proc/loadavg)"
echo "bench took $(($(date +%s) - T_START)) s"
exit 0
