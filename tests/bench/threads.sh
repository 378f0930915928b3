#!/bin/sh
# threads.sh - the archive's readers against the number of threads an archive lists: 106 events on 4 of 5,000 to 300,000 listed threads (4 ranks' threads; then a rank each), esconvert (--otf2, --json) beside esprofile on the same archive.
#
# usage: threads.sh BUILDDIR [ROUNDS]
# For each size, ROUNDS interleaved rounds (esprofile, esconvert --otf2,
# esconvert --json), each a whole process's wall time; each converter's
# median over esprofile's median.  The null control: esprofile's rounds
# against each other (its slowest over its fastest).  Every reader must
# grow linearly in threads: the ratios stay flat from 5k to 300k.  Then
# the same with a rank a thread, 5k to 80k: OTF2 wants a location, two
# files, per rank, so there --otf2 grows with the file system's creates,
# said as seconds per thousand ranks.
# Ends with: threads: otf2_vs_profile_300k=R json_vs_profile_300k=R (null N) profile_s_300k=S otf2_ms_per_1k_ranks_5k=M otf2_ms_per_1k_ranks_80k=M
set -u
build=$(cd "${1:?usage: threads.sh BUILDDIR [ROUNDS]}" && pwd)
rounds=${2:-5}
bench_job=bthr
. "$(dirname "$0")/lib.sh"
[ -x "$build/bench/listed" ] || { echo "threads: build $build/bench/listed first"; exit 2; }
secs() { # secs COMMAND...: its wall time in seconds
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>&1 || { echo "threads: $* failed" >&2; exit 1; }
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }'
}
# one SIZE [ranks]: medians of the rounds into p, o, j (seconds), null
one() {
	a="$dir/a$1"
	"$build/bench/listed" "$a" "$@" || exit 1
	: >"$dir/p" && : >"$dir/o" && : >"$dir/j"
	for r in $(seq "$rounds"); do
		secs "$bin/esprofile" -o "$dir/prof.txt" "$a" >>"$dir/p"
		rm -rf "$dir/otf2"
		secs "$bin/esconvert" -q --otf2 "$dir/otf2" "$a" >>"$dir/o"
		rm -f "$dir/t.json"
		secs "$bin/esconvert" -q --json "$dir/t.json" "$a" >>"$dir/j"
	done
	rm -rf "$a" "$dir/otf2"
	p=$(median <"$dir/p") o=$(median <"$dir/o") j=$(median <"$dir/j")
	null=$(sort -g "$dir/p" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.3f", hi / lo }')
}
echo "threads: 106 events on 4 of N listed threads; medians of $rounds interleaved rounds"
for n in 5000 20000 80000 300000; do
	one "$n"
	echo "  $n threads of 4 ranks: esprofile $p s, --otf2 $o s ($(ratio "$o" "$p")x), --json $j s ($(ratio "$j" "$p")x); null $null"
	[ "$n" = 300000 ] && { o3=$(ratio "$o" "$p"); j3=$(ratio "$j" "$p"); n3=$null; p3=$p; }
done
for n in 5000 80000; do
	one "$n" ranks
	per=$(awk -v o="$o" -v n="$n" 'BEGIN { printf "%.1f", o * 1000 / (n / 1000) }')
	echo "  $n ranks: esprofile $p s, --otf2 $o s ($per ms per 1,000 ranks), --json $j s ($(ratio "$j" "$p")x); null $null"
	eval "per$n=$per"
done
echo "threads: otf2_vs_profile_300k=$o3 json_vs_profile_300k=$j3 (null $n3) profile_s_300k=$p3" \
	"otf2_ms_per_1k_ranks_5k=$per5000 otf2_ms_per_1k_ranks_80k=$per80000"
