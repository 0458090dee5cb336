#!/usr/bin/env bash
# tests/test-check-layers.sh - the layer checker (tests/check-layers.sh) catches what it must.
#
# On a small synthetic tree with its own table (layers base < a, b (siblings) < top), compiled here:
# the clean tree passes; an upward include, an upward linked symbol, a sibling's include, a private
# header included from outside, an unplaced file and a missing object each fail with the line that
# names them; --graph prints the edges and the circles.  Then, on a copy of the real sources with the
# real table, an include of a command's header added to a collector and to symbolize/ is named.
# Run by `make check-layers-test` (part of `make test`); prints one line per case, exits 1 on a failure.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
checker=$here/check-layers.sh
repo=$(dirname "$here")
CC=${CC:-cc}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
failures=0 cases=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
indent() { local l; while IFS= read -r l; do printf '    %s\n' "$l"; done <<<"$1"; }

# run_checker DIR ARGS...: runs the checker on DIR; its output in $out, its exit status in $rc.
run_checker() {
	local dir=$1; shift
	out=$("$checker" --root "$dir" "$@" 2>&1)
	rc=$?
}

# expect_pass NAME DIR ARGS...
expect_pass() {
	local name=$1; shift
	cases=$((cases + 1))
	run_checker "$@"
	if [ $rc -ne 0 ]; then fail "$name: exit $rc, expected 0; output:"; indent "$out"
	else echo "ok: $name"; fi
}

# expect_violation NAME DIR LINE [ARGS...]: exit 1 and LINE, exactly, among the output lines.
expect_violation() {
	local name=$1 dir=$2 line=$3; shift 3
	cases=$((cases + 1))
	run_checker "$dir" "$@"
	if [ $rc -ne 1 ]; then fail "$name: exit $rc, expected 1; output:"; indent "$out"
	elif ! grep -qFx -- "$line" <<<"$out"; then fail "$name: no line \"$line\" in:"; indent "$out"
	else echo "ok: $name"; fi
}

# build DIR: compiles every .c of the synthetic tree to DIR/build/obj/FILE.o
build() {
	local c
	(cd "$1" && for c in base/*.c a/*.c b/*.c top/*.c; do
		mkdir -p "build/obj/$(dirname "$c")" &&
		$CC -std=gnu11 -Iinclude -c -o "build/obj/${c%.c}.o" "$c" || exit 1
	done) || { echo "FAIL: cannot compile the synthetic tree"; exit 1; }
}

# --- the synthetic tree
s=$tmp/synthetic
mkdir -p "$s/tests" "$s/include/syn" "$s/base" "$s/a" "$s/b" "$s/top"
cat > "$s/tests/layers.txt" <<'EOF'
# a synthetic tree for tests/test-check-layers.sh
scan base a b top include/syn
layer base 0
layer a 1
layer b 1
layer top 2
private b/*.h b/*
base/*.c              base
include/syn/base.h    base
a/*                   a
include/syn/a.h       a
b/*                   b
include/syn/b.h       b
top/*                 top
include/syn/top.h     top
EOF
echo 'int base_fn(void);' > "$s/include/syn/base.h"
echo 'int a_fn(void);' > "$s/include/syn/a.h"
echo 'int b_fn(void);' > "$s/include/syn/b.h"
echo 'int b_private_fn(void);' > "$s/b/internal.h"
echo 'int top_fn(void);' > "$s/include/syn/top.h"
printf '#include "syn/base.h"\nint base_fn(void) { return 1; }\n' > "$s/base/base.c"
printf '#include "syn/a.h"\n#include "syn/base.h"\nint a_fn(void) { return base_fn(); }\n' > "$s/a/a.c"
printf '#include "syn/b.h"\n#include "internal.h"\n#include "syn/base.h"\nint b_private_fn(void) { return 2; }\nint b_fn(void) { return base_fn() + b_private_fn(); }\n' > "$s/b/b.c"
printf '#include "syn/top.h"\n#include "syn/a.h"\n#include "syn/b.h"\nint top_fn(void) { return a_fn() + b_fn(); }\n' > "$s/top/top.c"
build "$s"
expect_pass "a clean tree passes" "$s"

# copy NAME: a fresh copy of the clean synthetic tree in $t
copy() { t=$tmp/$1; cp -r "$s" "$t"; }

copy up-include
printf '#include "syn/top.h"\n' >> "$t/base/base.c"
expect_violation "an upward include fails" "$t" \
	'base/base.c: #include "syn/top.h": layer base (0) may not use top (2), a higher layer' --includes-only

copy up-include-header
printf '#include "syn/top.h"\n' >> "$t/include/syn/a.h"
expect_violation "an upward include in a header fails" "$t" \
	'include/syn/a.h: #include "syn/top.h": layer a (1) may not use top (2), a higher layer' --includes-only

copy up-symbol
# top_fn declared by hand: no include says so, only the link does
printf 'int top_fn(void);\nint a_calls_up(void);\nint a_calls_up(void) { return top_fn(); }\n' >> "$t/a/a.c"
build "$t"
expect_violation "an upward linked symbol fails" "$t" \
	'build/obj/a/a.o: links top_fn from build/obj/top/top.o: layer a (1) may not use top (2), a higher layer'
expect_pass "--includes-only does not look at the objects" "$t" --includes-only
run_checker "$t" --graph
cases=$((cases + 1))
if [ $rc -ne 0 ] ||
   ! grep -qFx 'a/a.o -> top/top.o [a -> top] UP (top_fn)' <<<"$out" ||
   ! grep -qFx 'top/top.o -> a/a.o [top -> a] (a_fn)' <<<"$out" ||
   ! grep -qFx 'circle of 2 objects: a/a.o top/top.o' <<<"$out"; then
	fail "--graph: the edges a <-> top and their circle are missing:"; indent "$out"
else echo "ok: --graph prints the edges, the upward one marked, and the circle"; fi

copy sibling-include
printf '#include "syn/b.h"\n' >> "$t/a/a.c"
expect_violation "an include of a sibling layer fails" "$t" \
	'a/a.c: #include "syn/b.h": layer a (1) may not use its sibling b (1)' --includes-only

copy sibling-symbol
printf 'int b_fn(void);\nint a_calls_b(void);\nint a_calls_b(void) { return b_fn(); }\n' >> "$t/a/a.c"
build "$t"
expect_violation "a symbol of a sibling layer fails" "$t" \
	'build/obj/a/a.o: links b_fn from build/obj/b/b.o: layer a (1) may not use its sibling b (1)'

copy private-header
printf '#include "../b/internal.h"\n' >> "$t/top/top.c"
expect_violation "a private header included from outside fails" "$t" \
	'top/top.c: #include "../b/internal.h": b/internal.h is private to b/*' --includes-only

copy unplaced
mkdir -p "$t/top2" && sed -i 's/^scan .*/& top2/' "$t/tests/layers.txt"
printf 'int new_fn(void);\nint new_fn(void) { return 0; }\n' > "$t/top2/new.c"
expect_violation "a file the table does not place fails" "$t" \
	'top2/new.c: not assigned to a layer (place it in tests/layers.txt)' --includes-only

copy missing-object
rm "$t/build/obj/b/b.o"
expect_violation "a missing object fails" "$t" \
	'build/obj/b/b.o: missing: build the objects first (make check-layers does)'

copy bad-table
echo 'top/*.c nosuchlayer' >> "$t/tests/layers.txt"
run_checker "$t"
cases=$((cases + 1))
if [ $rc -ne 2 ] || ! grep -q 'unknown layer nosuchlayer' <<<"$out"; then fail "a bad table: exit $rc, output: $out"
else echo "ok: a table line naming no layer is refused"; fi

# --- the real table on a copy of the real sources (includes only: the objects are the build's)
r=$tmp/real
mkdir -p "$r/tests"
read -r -a scan_dirs < <(sed -n 's/^scan[[:space:]]//p' "$repo/tests/layers.txt")
(cd "$repo" && cp -r --parents "${scan_dirs[@]}" tests/layers.txt "$r") ||
	{ echo "FAIL: cannot copy the sources"; exit 1; }
run_checker "$r" --includes-only
before=$out
printf '#include "sigprof/commands/report.h"\n' >> "$r/collectors/kernel/perf.c"
printf '#include "sigprof/commands/report.h"\n' >> "$r/symbolize/symtab.c"
for line in 'collectors/kernel/perf.c: #include "sigprof/commands/report.h": layer kernel (1) may not use commands (5), a higher layer' \
	    'symbolize/symtab.c: #include "sigprof/commands/report.h": layer symbolize (1) may not use commands (5), a higher layer'; do
	if grep -qFx -- "$line" <<<"$before"; then cases=$((cases + 1)); fail "the real tree already has: $line"
	else expect_violation "the real table: ${line%%:*} including a command's header fails" "$r" "$line" --includes-only
	fi
done

# a collector reads a loaded profile only through view.h: the model's profile.h is private to the profiler
printf '#include "sigprof/model/profile.h"\n' >> "$r/collectors/signal.c"
line='collectors/signal.c: #include "sigprof/model/profile.h": include/sigprof/model/profile.h is private to profiler/* or include/sigprof/commands/*'
expect_violation "the real table: a collector including profile.h fails" "$r" "$line" --includes-only

echo "check-layers-test: $cases cases, $failures failed"
[ $failures -eq 0 ]
