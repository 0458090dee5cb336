#!/usr/bin/env bash
# tests/bench.sh - sigprof against `perf record`: recording overhead, lost records and report time.
#
# Run from the repository root after `make sigprof workloads` (`make bench` does both).
#
# Method
#   Workloads (each runs for a fixed time and reports its own throughput):
#     timer  stress-ng --timer 1 --timer-freq 100000 -t $BENCH_SECONDS --metrics-brief
#            one process taking POSIX timer signals as fast as it can (signal deliver/sigreturn paths);
#            throughput = the timer line's "bogo ops/s (real time)" column.
#     futex  perf bench futex hash -r $BENCH_SECONDS -t 2
#            two threads hammering the futex hash table; throughput = "Averaged N operations/sec".
#   Each workload runs in three modes:
#     bare     the workload alone;
#     perf     perf record -g -F 4000 -o FILE -- WORKLOAD
#     sigprof  ./sigprof record -e cpu -F 4000 -o FILE -- WORKLOAD  (the cpu collector alone: what perf -g records)
#   A round runs every mode once; the order of the modes rotates from round to round
#   (bare/perf/sigprof, perf/sigprof/bare, sigprof/bare/perf, ...) so that drift on a shared machine does
#   not always hit the same mode.  BENCH_REPEAT rounds (default 3); the table shows the median throughput
#   of each mode, overhead = median(tool) / median(bare) and the throughput lost (1 - ratio).
#   Samples: median over the rounds (perf: SAMPLE events of `perf report --stats`; sigprof: meta.samples
#   of `sigprof report --json`).  Lost: the sum over all rounds (perf: the larger of the summed
#   PERF_RECORD_LOST "lost:" counts and the summed PERF_RECORD_LOST_SAMPLES counts in `perf report -D`,
#   which count the same losses two ways; sigprof: meta.lost).
#   Report time: on the last round's recordings of each workload, `perf report --stdio -i F >/dev/null`
#   and `./sigprof report -i F >/dev/null`, each run once untimed to warm the page cache and then
#   BENCH_REPORT_REPEAT times (default 3), wall clock; the median is shown with the ratio perf/sigprof.
#
# Targets (printed as PASS/MISS with the margin; a miss does not change the exit status, this is a
# measurement): sigprof overhead <= perf overhead; 0 lost at the default rate; sigprof report >= 3x
# faster than perf report.
#
# Environment: BENCH_SECONDS (default 5) seconds per run, BENCH_REPEAT (default 3) rounds,
# BENCH_REPORT_REPEAT (default 3), BENCH_FREQ (default 4000) sampling rate, SIGPROF (default ./sigprof).
# Defaults take about 3 minutes.  A missing perf or stress-ng skips its column/workload with a note.
# Exit status: 0 when every measurement was taken, 1 when a tool or workload fails or its output
# cannot be parsed, 2 on bad usage.
set -euo pipefail

SECONDS_PER_RUN=${BENCH_SECONDS:-5}
REPEAT=${BENCH_REPEAT:-3}
REPORT_REPEAT=${BENCH_REPORT_REPEAT:-3}
FREQ=${BENCH_FREQ:-4000}
SIGPROF=${SIGPROF:-./sigprof}

for v in SECONDS_PER_RUN REPEAT REPORT_REPEAT FREQ; do
    if ! [[ ${!v} =~ ^[1-9][0-9]*$ ]]; then
        echo "bench: $v must be a positive integer (got '${!v}')" >&2
        exit 2
    fi
done
if [[ ! -x $SIGPROF ]]; then
    echo "bench: $SIGPROF not found; run 'make sigprof workloads' (or 'make bench') first" >&2
    exit 1
fi
SIGPROF=$(cd "$(dirname "$SIGPROF")" && pwd)/$(basename "$SIGPROF")

TMP=$(mktemp -d "${TMPDIR:-/tmp}/sigprof-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

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

# ---------------------------------------------------------------- what can run
HAVE_PERF=0 HAVE_STRESS=0 HAVE_JQ=0
NOTES=()
if command -v perf >/dev/null 2>&1 && perf --version >/dev/null 2>&1; then
    HAVE_PERF=1
else
    NOTES+=("perf not found or not working: the perf column and the futex workload (perf bench) are skipped")
fi
if command -v stress-ng >/dev/null 2>&1; then
    HAVE_STRESS=1
else
    NOTES+=("stress-ng not found: the timer workload is skipped")
fi
if command -v jq >/dev/null 2>&1; then
    HAVE_JQ=1
else
    NOTES+=("jq not found: sigprof samples/lost are read from its closing line instead of report --json")
fi

WORKLOADS=()
((HAVE_STRESS)) && WORKLOADS+=(timer)
((HAVE_PERF)) && WORKLOADS+=(futex)
MODES=(bare)
((HAVE_PERF)) && MODES+=(perf)
MODES+=(sigprof)

if ((${#WORKLOADS[@]} == 0)); then
    printf 'bench: %s\n' "${NOTES[@]}" >&2
    echo "bench: no workload can run; nothing measured" >&2
    exit 0
fi

workload_cmd() {
    case $1 in
        timer) echo "stress-ng --timer 1 --timer-freq 100000 -t $SECONDS_PER_RUN --metrics-brief" ;;
        futex) echo "perf bench futex hash -r $SECONDS_PER_RUN -t 2" ;;
    esac
}

# throughput from a workload's output (stdout+stderr, possibly mixed with the profiler's)
parse_ops() {
    case $1 in
        timer) awk '$2 == "metrc:" && $4 == "timer" && $5 ~ /^[0-9]+$/ { v = $(NF - 1) } END { if (v != "") print v }' "$2" ;;
        futex) awk '$1 == "Averaged" && $3 == "operations/sec" { v = $2 } END { if (v != "") print v }' "$2" ;;
    esac
}

median() { # numbers as arguments
    printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) exit; if (NR % 2) print a[(NR + 1) / 2]; else printf "%.6g\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

now_ns() { date +%s%N; }

perf_samples() {
    perf report -i "$1" --stats 2>/dev/null | awk '$1 == "SAMPLE" && $2 == "events:" { print $3; exit }'
}

perf_lost() {
    # PERF_RECORD_LOST: ring-buffer overflows as the kernel reported them while recording;
    # PERF_RECORD_LOST_SAMPLES: perf >= 6.0 also writes the kernel's own lost counter at the end.
    # Both count the same losses, so take the larger sum.
    perf report -D -i "$1" 2>/dev/null | awk '
        /PERF_RECORD_LOST_SAMPLES/ { n = split($0, f, ":"); s += f[n] + 0; next }
        /PERF_RECORD_LOST:/        { n = split($0, f, "lost:"); l += f[n] + 0 }
        END { print (l > s ? l : s) + 0 }'
}

sigprof_field() { # FILE FIELD(samples|lost) RECORD-LOG
    if ((HAVE_JQ)); then
        "$SIGPROF" report -i "$1" --json | jq -r ".meta.$2"
    else
        sed -n 's/^sigprof: recorded .* \([0-9][0-9]*\) samples, \([0-9][0-9]*\) lost.*/\1 \2/p' "$3" |
            awk -v f="$2" '{ print (f == "samples") ? $1 : $2 }'
    fi
}

# ---------------------------------------------------------------- one run
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
        perf)
            s=$(perf_samples "$data")
            l=$(perf_lost "$data")
            ;;
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

# ---------------------------------------------------------------- header
rate_before=$(cat /proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null || echo '?')
echo "sigprof bench: ${SECONDS_PER_RUN}s per run, $REPEAT rounds, -F $FREQ, report timed x$REPORT_REPEAT"
echo "  machine: $(nproc) CPUs, kernel $(uname -r); sigprof: $SIGPROF"
((HAVE_PERF)) && echo "  $(perf --version)"
((HAVE_STRESS)) && echo "  $(stress-ng --version | head -n 1)"
echo "  kernel.perf_event_max_sample_rate: $rate_before"
for n in "${NOTES[@]}"; do echo "  note: $n"; done
echo

# ---------------------------------------------------------------- throughput rounds
echo "throughput runs:"
for ((r = 1; r <= REPEAT; r++)); do
    nm=${#MODES[@]}
    for wl in "${WORKLOADS[@]}"; do
        for ((i = 0; i < nm; i++)); do
            run_one "$wl" "${MODES[$(((i + r - 1) % nm))]}" "$r"
        done
    done
done
echo

# ---------------------------------------------------------------- report time
declare -A RTIME
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
echo "report time (median of $REPORT_REPEAT, ms):"
for wl in "${WORKLOADS[@]}"; do
    if ((HAVE_PERF)); then
        RTIME[$wl.perf]=$(time_cmd_ms perf report --stdio -i "${LASTFILE[$wl.perf]}")
    fi
    RTIME[$wl.sigprof]=$(time_cmd_ms "$SIGPROF" report -i "${LASTFILE[$wl.sigprof]}")
    printf '  %-6s perf report %s ms, sigprof report %s ms  (files: perf %s KB, sigprof %s KB)\n' "$wl" \
        "${RTIME[$wl.perf]:--}" "${RTIME[$wl.sigprof]}" \
        "$( ((HAVE_PERF)) && echo $(($(stat -c %s "${LASTFILE[$wl.perf]}") / 1024)) || echo -)" \
        "$(($(stat -c %s "${LASTFILE[$wl.sigprof]}") / 1024))"
done
echo

# ---------------------------------------------------------------- table
calc() { awk "BEGIN { printf $1 }"; }
declare -A RATIO
printf '%-7s %-8s %13s %17s %7s %13s %8s %8s %6s %9s\n' workload mode "ops/s(med)" "ops/s(min-max)" ratio \
    "ratio(min-max)" lost-thr samples lost report-ms
for wl in "${WORKLOADS[@]}"; do
    read -r -a bare_ops <<<"${OPS[$wl.bare]}"
    for mode in "${MODES[@]}"; do
        read -r -a ops <<<"${OPS[$wl.$mode]}"
        m=$(median "${ops[@]}")
        range=$(printf '%s\n' "${ops[@]}" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.0f-%.0f", lo, hi }')
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
        rrange=$(printf '%s\n' "${ratios[@]}" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.2f-%.2f", lo, hi }')
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

# ---------------------------------------------------------------- targets
echo "targets:"
for wl in "${WORKLOADS[@]}"; do
    if ((HAVE_PERF)); then
        sp=${RATIO[$wl.sigprof]} pf=${RATIO[$wl.perf]}
        verdict=$(calc "\"%s\", ($sp >= $pf) ? \"PASS\" : \"MISS\"")
        printf '  [%s] %-6s sigprof overhead <= perf overhead: throughput lost sigprof %.1f%%, perf %.1f%% (sigprof %s)\n' \
            "$verdict" "$wl" "$(calc "\"%.1f\", 100 * (1 - $sp)")" "$(calc "\"%.1f\", 100 * (1 - $pf)")" \
            "$(calc "\"%s\", ($sp >= $pf) ? sprintf(\"%.1f points better\", 100 * ($sp - $pf)) : sprintf(\"%.1f points worse\", 100 * ($pf - $sp))")"
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
for wl in "${WORKLOADS[@]}"; do
    if ((HAVE_PERF)); then
        pr=${RTIME[$wl.perf]} sr=${RTIME[$wl.sigprof]}
        ((sr > 0)) || sr=1
        x=$(calc "\"%.2f\", $pr / $sr")
        verdict=$(calc "\"%s\", ($x >= 3) ? \"PASS\" : \"MISS\"")
        printf '  [%s] %-6s report >= 3x faster than perf report: %sx (perf %s ms, sigprof %s ms; %s)\n' \
            "$verdict" "$wl" "$x" "$pr" "${RTIME[$wl.sigprof]}" \
            "$(calc "\"%s\", ($x >= 3) ? \"target met\" : sprintf(\"%.2fx short\", 3 - $x)")"
    else
        echo "  [SKIP] $wl    report >= 3x faster than perf report: no perf"
    fi
done

rate_after=$(cat /proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null || echo '?')
if [[ $rate_after != "$rate_before" ]]; then
    echo
    echo "note: the kernel lowered perf_event_max_sample_rate from $rate_before to $rate_after during the run" \
        "(sampling interrupts took too long); later runs sampled at a lower rate"
fi
exit 0
