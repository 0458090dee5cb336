#!/usr/bin/env bash
# tests/skip-summary.sh - the skipped tests of a criterion run, counted by kind and reason.
#
# The tests tell two kinds of skip apart by the first word of their message (tests/integration/harness.h):
# "environment:" the machine lacks something (no PMU, no tracefs, not root, a tool not installed);
# "premise:" what the test checks did not happen in this run (which fails instead when CI=true runs as root).
# Reads the TAP file a criterion binary wrote with --tap=FILE; prints one summary line, then one line per
# reason with how many tests it skipped.  Tests left out by --filter are not counted.
#
# usage: tests/skip-summary.sh NAME TAP_FILE
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: $0 NAME TAP_FILE" >&2; exit 2; }
name=$1 tap=$2
[ -r "$tap" ] || { echo "$name: no TAP file $tap" >&2; exit 2; }
awk -v name="$name" '
/^ok - / && / # SKIP / {
	reason = $0; sub(/.* # SKIP /, "", reason)
	if (reason == "test was skipped") next        # left out by --filter
	kind = reason ~ /^environment: / ? "environment" : reason ~ /^premise: / ? "premise" : "unsaid"
	sub(/^(environment|premise): /, "", reason)
	skipped[kind]++; total++
	why[kind ": " reason]++
	next
}
/^ok - / { passed++ }
/^not ok - / { failed++ }
END {
	printf "%s: %d passed, %d failed, %d skipped (%d environment, %d premise", name, passed, failed, total,
	       skipped["environment"], skipped["premise"]
	if (skipped["unsaid"]) printf ", %d unsaid", skipped["unsaid"]
	printf ")\n"
	for (w in why) printf "  %3d skipped, %s\n", why[w], w | "sort -k3,3 -k1,1nr"
}' "$tap"
