#!/bin/sh
# t_bench_list.sh - make bench runs what tests/bench/list says, and the list is the benchmarks that exist: each prints its summary line, every other program or script there is a named helper; the runner goes past a benchmark that fails and ends 1 naming it.
set -u
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
list="$src/tests/bench/list"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

grep -q '^	@sh tests/bench/run.sh \$(BUILD)$' "$src/Makefile" || die "make bench does not run tests/bench/run.sh"
benches=$(grep -v '^#\|^helper \|^$' "$list")
helpers=$(grep '^helper ' "$list" | cut -d' ' -f2-)
[ -n "$benches" ] && [ -n "$helpers" ] || die "the list names no benchmark or no helper"
# each benchmark: its program or script is there, and prints its summary line
echo "$benches" | while read -r name cmd args; do
	case $cmd in
	bench/*) f="$src/tests/bench/${cmd#bench/}.c" ;;
	*) f="$src/$cmd" ;;
	esac
	[ -f "$f" ] || die "the list runs $cmd, which is not in tests/bench"
	grep -q "\"$name: " "$f" || die "$f never prints the summary line '$name: ...' the list expects"
done || exit 1
# every program and script of tests/bench: a benchmark or a helper, never both, never neither
for f in "$src"/tests/bench/*.c "$src"/tests/bench/*.sh; do
	b=$(basename "$f")
	b=${b%.*}
	case $b in run) continue ;; esac
	inlist=$(echo "$benches" | awk -v p="bench/$b" -v s="tests/bench/$b.sh" '$2 == p || $2 == s' | wc -l)
	helper=$(echo " $helpers " | tr ' ' '\n' | grep -cx "$b")
	[ "$inlist" -gt 0 ] && [ "$helper" -gt 0 ] && die "$b is both a benchmark and a helper in the list"
	[ "$inlist" -gt 0 ] || [ "$helper" -gt 0 ] || die "tests/bench/$(basename "$f") is neither a benchmark nor a helper in tests/bench/list"
done
for h in $helpers; do
	ls "$src"/tests/bench/"$h".* >/dev/null 2>&1 || die "the list's helper $h is not in tests/bench"
done

# the runner: every benchmark run to its end; one without its summary line, or failing, named
mkdir "$dir/bench"
printf '#!/bin/sh\necho "good: x=1"\n' >"$dir/bench/good"
printf '#!/bin/sh\necho "usage: quiet A B"\n' >"$dir/bench/quiet"
printf '#!/bin/sh\necho "failing: x=2"; exit 3\n' >"$dir/bench/failing"
chmod +x "$dir/bench/"*
printf 'good bench/good\nquiet bench/quiet\nhelper quiet\nfailing bench/failing\ngood bench/good\n' >"$dir/list"
BENCH_LIST="$dir/list" sh "$src/tests/bench/run.sh" "$dir" >"$dir/out" 2>&1 && die "the runner ended 0 with two benchmarks not whole"
grep -q "^bench: 4 benchmarks in [0-9]* s; not whole: quiet(bench/quiet: no summary line) failing(bench/failing: exit 3)$" \
	"$dir/out" || die "the runner did not say which were not whole: $(cat "$dir/out")"
[ "$(grep -c "^good: x=1$" "$dir/out")" -eq 2 ] || die "the runner stopped before the last benchmark: $(cat "$dir/out")"
printf 'good bench/good\n' >"$dir/list"
BENCH_LIST="$dir/list" sh "$src/tests/bench/run.sh" "$dir" >"$dir/out" 2>&1 || die "the runner failed a whole list: $(cat "$dir/out")"
echo "t_bench_list: $(echo "$benches" | wc -l) benchmarks, $(echo $helpers | wc -w) helpers, the runner goes on past failures"
