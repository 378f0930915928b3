# lib.sh - what the benchmark scripts share: a scratch directory and job prefix, segment clean-up, medians and ratios.
# Sourced with $build set; sets bin, dir and job (PREFIX$$), and removes both at exit.
bin=$build/bin
export ES_KEEP=always # benchmarks read jobs' trace spaces after they end, and remove their own
dir=$(mktemp -d)
job="${bench_job:-bench}$$"
rm_segments() { # rm_segments PREFIX: this host's segments whose names start with PREFIX
	for seg in $("$bin/psadm" list | awk '{print $1}' | grep "^$1"); do "$bin/psadm" rm "$seg" >/dev/null; done
	rm -f /dev/shm/pastset-expect."$1"* # the notes of waiting monitors killed before they could
}
cleanup() {
	rm_segments "$job"
	rm -rf "$dir"
}
trap cleanup EXIT
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f\n", a / b }'; }
spread() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s to %s", lo, hi }'; }
