#!/usr/bin/env bash
# tests/check-layers.sh - sigprof's layers, enforced (docs/layers.md; `make check-layers`).
#
# Reads the layer table (tests/layers.txt: which layer each file belongs to, each layer's rank) and
# checks two things go down the layers only:
#   - every `#include "..."` of a scanned .c or .h file (resolved beside the file, then in include/);
#   - every symbol an object links to: the undefined symbols of $BUILD/obj/FILE.o of each scanned .c,
#     matched with the object that defines them (nm).
# A file may use its own layer or a layer of lower rank; two layers of one rank may not use each
# other.  It also fails on a scanned file that the table does not place, on a private header
# included from outside its owners, and on a missing object (build first: make check-layers does).
# Prints one line per violation and exits 1 if there is any; exits 2 on bad usage or a bad table.
#
# usage: tests/check-layers.sh [--root DIR] [--table FILE] [--build DIR] [--includes-only] [--graph] [--folders]
#   --root DIR       the source tree (default: the repository this script is in)
#   --table FILE     the layer table (default: ROOT/tests/layers.txt)
#   --build DIR      where the objects are, relative to ROOT unless absolute (default: build)
#   --includes-only  check the includes and the table only, not the objects
#   --graph          print the object graph instead of checking: one line per edge
#                    "a.o -> b.o [layer -> layer] (symbols)", upward edges marked "UP", then the
#                    circles of objects (strongly connected components of more than one object)
#   --folders        print the graph of folders instead: one line per edge "DIR -> DIR [layer -> layer]
#                    (N symbols)", upward ones marked "UP", then "folders going up: N"
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
table='' build=build includes_only=0 graph=0 folders=0
while [ $# -gt 0 ]; do
	case $1 in
	--root) root=$2; shift 2 ;;
	--table) table=$2; shift 2 ;;
	--build) build=$2; shift 2 ;;
	--includes-only) includes_only=1; shift ;;
	--graph) graph=1; shift ;;
	--folders) folders=1; shift ;;
	*) echo "usage: $0 [--root DIR] [--table FILE] [--build DIR] [--includes-only] [--graph] [--folders]" >&2; exit 2 ;;
	esac
done
table=${table:-$root/tests/layers.txt}
table_name=${table#"$root"/}
cd "$root" || exit 2
[ -r "$table" ] || { echo "check-layers: cannot read the layer table $table" >&2; exit 2; }

# --- the table
declare -A rank=()                 # layer -> rank
globs=() glob_layer=()             # placement lines, in order
private_globs=() private_from=()   # private headers and who may include them
scan_dirs=()
lineno=0
while read -r -a w; do
	lineno=$((lineno + 1))
	[ ${#w[@]} -eq 0 ] && continue
	case ${w[0]} in
	'#'*) continue ;;
	scan) scan_dirs+=("${w[@]:1}") ;;
	layer)
		[[ ${#w[@]} -eq 3 && ${w[2]} =~ ^[0-9]+$ ]] || { echo "$table_name:$lineno: expected: layer NAME RANK" >&2; exit 2; }
		rank[${w[1]}]=${w[2]} ;;
	private)
		[ ${#w[@]} -eq 3 ] || { echo "$table_name:$lineno: expected: private GLOB FROM" >&2; exit 2; }
		private_globs+=("${w[1]}"); private_from+=("${w[2]}") ;;
	*)
		[ ${#w[@]} -eq 2 ] || { echo "$table_name:$lineno: expected: GLOB LAYER" >&2; exit 2; }
		[ -n "${rank[${w[1]}]:-}" ] || { echo "$table_name:$lineno: unknown layer ${w[1]} (declare it with a layer line first)" >&2; exit 2; }
		globs+=("${w[0]}"); glob_layer+=("${w[1]}") ;;
	esac
done < "$table"
[ ${#scan_dirs[@]} -gt 0 ] || { echo "$table_name: no scan line" >&2; exit 2; }

# layer_of FILE: sets $layer to the layer of FILE ("" when no line places it).
layer_of() {
	local i
	layer=
	for i in "${!globs[@]}"; do
		# shellcheck disable=SC2053 # the right side is a glob on purpose
		if [[ $1 == ${globs[$i]} ]]; then layer=${glob_layer[$i]}; return; fi
	done
}

# use_error FROM_LAYER TO_LAYER: prints why FROM may not use TO, or nothing when it may.
use_error() {
	local a=${rank[$1]} b=${rank[$2]}
	if [ "$1" = "$2" ] || [ "$a" -gt "$b" ]; then return; fi
	if [ "$a" -eq "$b" ]; then
		echo "layer $1 ($a) may not use its sibling $2 ($b)"
	else
		echo "layer $1 ($a) may not use $2 ($b), a higher layer"
	fi
}

violations=0
violation() { echo "$*"; violations=$((violations + 1)); }

mapfile -t files < <(find "${scan_dirs[@]}" -type f \( -name '*.c' -o -name '*.h' \) 2>/dev/null | sort)
declare -A file_layer=() scanned=()
for f in "${files[@]}"; do
	scanned[$f]=1
	layer_of "$f"
	if [ -z "$layer" ]; then
		[ $graph = 1 ] || violation "$f: not assigned to a layer (place it in $table_name)"
		continue
	fi
	file_layer[$f]=$layer
done

# --- includes
check_includes() {
	local f inc target why i dir
	for f in "${files[@]}"; do
		[ -n "${file_layer[$f]:-}" ] || continue
		dir=$(dirname "$f")
		while read -r inc; do
			if [ -f "$dir/$inc" ]; then target=$dir/$inc
			elif [ -f "include/$inc" ]; then target=include/$inc
			else violation "$f: #include \"$inc\": not found beside it nor in include/"; continue
			fi
			target=$(realpath -m --relative-to=. "$target")
			# a private header may be included from what any of its private lines allows
			private=0 allowed=0 owners=""
			for i in "${!private_globs[@]}"; do
				# shellcheck disable=SC2053
				[[ $target == ${private_globs[$i]} ]] || continue
				private=1
				owners+="${owners:+ or }${private_from[$i]}"
				# shellcheck disable=SC2053
				[[ $f == ${private_from[$i]} ]] && allowed=1
			done
			if [ "$private" = 1 ] && [ "$allowed" = 0 ]; then
				violation "$f: #include \"$inc\": $target is private to $owners"
			fi
			layer_of "$target"
			if [ -z "$layer" ]; then
				# a scanned file without a layer is reported once, above
				[ -n "${scanned[$target]:-}" ] || violation "$f: #include \"$inc\": $target is not assigned to a layer (place it in $table_name)"
				continue
			fi
			why=$(use_error "${file_layer[$f]}" "$layer")
			[ -z "$why" ] || violation "$f: #include \"$inc\": $why"
		done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
	done
}

# --- symbols: prints the edges "user.o definer.o symbol", sorted, self-edges left out
objects=()
declare -A object_source=()
for f in "${files[@]}"; do
	[[ $f == *.c ]] || continue
	o=${build%/}/obj/${f%.c}.o
	objects+=("$o")
	object_source[$o]=$f
done

symbol_edges() {
	nm -A -g "$@" | awk '
	{
		colon = index($0, ":"); file = substr($0, 1, colon - 1)
		n = split(substr($0, colon + 1), w, " "); type = w[n - 1]; name = w[n]
		if (n < 2) next
		if (type == "U" || type == "w" || type == "v") { uses[++nuses] = file SUBSEP name }
		else if (type ~ /^[A-Z]$/ && !(name in def)) def[name] = file
	}
	END {
		for (i = 1; i <= nuses; i++) {
			split(uses[i], u, SUBSEP)
			if ((u[2] in def) && def[u[2]] != u[1]) print u[1], def[u[2]], u[2]
		}
	}' | sort -u
}

check_symbols() {
	local o missing=0 user definer sym why from to
	for o in "${objects[@]}"; do
		if [ ! -f "$o" ]; then violation "$o: missing: build the objects first (make check-layers does)"; missing=1; fi
	done
	[ $missing = 0 ] || return
	while read -r user definer sym; do
		from=${file_layer[${object_source[$user]}]:-} to=${file_layer[${object_source[$definer]}]:-}
		# an object of an unplaced file: the file is reported already
		if [ -z "$from" ] || [ -z "$to" ]; then continue; fi
		why=$(use_error "$from" "$to")
		[ -z "$why" ] || violation "$user: links $sym from $definer: $why"
	done < <(symbol_edges "${objects[@]}")
}

# --- the graph: edges with their symbols and layers, then the circles (Tarjan's algorithm in awk)
print_graph() {
	local o present=()
	for o in "${objects[@]}"; do [ -f "$o" ] && present+=("$o"); done
	[ ${#present[@]} -gt 0 ] || { echo "check-layers: no objects under ${build%/}/obj: build first" >&2; exit 2; }
	local tmp
	tmp=$(mktemp) || exit 2
	symbol_edges "${present[@]}" | while read -r user definer sym; do
		local lu=${file_layer[${object_source[$user]}]:-unplaced} ld=${file_layer[${object_source[$definer]}]:-unplaced}
		local up=""
		[ "$lu" = unplaced ] || [ "$ld" = unplaced ] || [ -z "$(use_error "$lu" "$ld")" ] || up=" UP"
		echo "$user $definer $lu $ld$up $sym"
	done | awk -v prefix="${build%/}/obj/" '
	function short(o) { sub("^" prefix, "", o); return o }
	function sorted(a, n,    i, j, t, s) {
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		for (i = 1; i <= n; i++) s = s " " a[i]
		return s
	}
	{
		key = $1 " " $2
		if (key in syms) syms[key] = syms[key] ", " $NF
		else {
			order[++nedges] = key; syms[key] = $NF
			label[key] = short($1) " -> " short($2) " [" $3 " -> " $4 "]" ($5 == "UP" ? " UP" : "")
		}
		node[$1] = 1; node[$2] = 1
		succ[$1] = succ[$1] " " $2
	}
	function visit(v,    n, i, w, list, c) {
		index_of[v] = low[v] = ++counter; stack[++sp] = v; on[v] = 1
		n = split(succ[v], list, " ")
		for (i = 1; i <= n; i++) {
			w = list[i]
			if (!(w in index_of)) { visit(w); if (low[w] < low[v]) low[v] = low[w] }
			else if (on[w] && index_of[w] < low[v]) low[v] = index_of[w]
		}
		if (low[v] == index_of[v]) {
			n = 0
			do { w = stack[sp--]; on[w] = 0; member[++n] = short(w) } while (w != v)
			if (n > 1) print "C\tcircle of " n " objects:" sorted(member, n)
		}
	}
	END {
		for (i = 1; i <= nedges; i++) print "E\t" label[order[i]] " (" syms[order[i]] ")"
		for (v in node) if (!(v in index_of)) visit(v)
	}' > "$tmp"
	sed -n 's/^E\t//p' "$tmp"
	echo
	if grep -q '^C' "$tmp"; then sed -n 's/^C\t//p' "$tmp" | sort; else echo "circles: none"; fi
	rm -f "$tmp"
}

# --- the folders: which folder's objects use which folder's, and whether that goes up a layer
print_folders() {
	local o present=()
	for o in "${objects[@]}"; do [ -f "$o" ] && present+=("$o"); done
	[ ${#present[@]} -gt 0 ] || { echo "check-layers: no objects under ${build%/}/obj: build first" >&2; exit 2; }
	symbol_edges "${present[@]}" | while read -r user definer sym; do
		local su=${object_source[$user]} sd=${object_source[$definer]}
		local lu=${file_layer[$su]:-unplaced} ld=${file_layer[$sd]:-unplaced} up=""
		[ "$lu" = unplaced ] || [ "$ld" = unplaced ] || [ -z "$(use_error "$lu" "$ld")" ] || up=UP
		[ "${su%/*}" = "${sd%/*}" ] || echo "${su%/*} ${sd%/*} $lu $ld ${up:--}"
	done | sort | uniq -c | awk '
	{ print $2 " -> " $3 " [" $4 " -> " $5 "] (" $1 " symbols)" ($6 == "UP" ? " UP" : ""); if ($6 == "UP") up++ }
	END { print ""; print "folders going up: " up + 0 }'
}

if [ $graph = 1 ]; then print_graph; exit 0; fi
if [ $folders = 1 ]; then print_folders; exit 0; fi
check_includes
[ $includes_only = 1 ] || check_symbols
if [ $violations -gt 0 ]; then
	echo "check-layers: $violations violations of the layers (docs/layers.md, $table_name)" >&2
	exit 1
fi
echo "check-layers: ${#files[@]} files, every include and linked symbol goes down the layers"
