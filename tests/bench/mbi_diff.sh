#!/bin/sh
# mbi_diff.sh - mbi.sh's outcomes under Open MPI and MPICH side by side: the table by kind for each, and every program whose outcome differs.
# usage: mbi_diff.sh BUILDDIR   (after mbi.sh --mpi openmpi and --mpi mpich on the same programs)
set -u
build=${1:?usage: mbi_diff.sh BUILDDIR}
a="$build/mbi-openmpi/results.txt" b="$build/mbi-mpich/results.txt"
for f in "$a" "$b"; do
	[ -f "$f" ] || { echo "mbi_diff: no $f (run mbi.sh --mpi for each MPI first)"; exit 2; }
done
# results: NAME OUTCOME AGE KIND NP
awk '
	FNR == 1 { m++ }
	{ out[m, $1] = $2; kind[$1] = $4; names[$1] = 1 }
	END {
		for (n in names) {
			k = kind[n]; prog[k]++
			for (i = 1; i <= 2; i++) {
				o = out[i, n]
				if (o == "named" || o == "missed") hung[i, k]++
				if (o == "named") named[i, k]++
				if (o == "false_alarm") fa[i, k]++
			}
			if (out[1, n] != out[2, n]) diff[++d] = sprintf("  %-44s %-22s %-12s %-12s", n, k, out[1, n], out[2, n])
		}
		printf "  %-22s %8s | %-22s | %-22s\n", "", "", "Open MPI", "MPICH"
		printf "  %-22s %8s | %5s %6s %9s | %5s %6s %9s\n", "kind", "programs", "hung", "named", "false al.", "hung", "named", "false al."
		for (k in prog)
			printf "  %-22s %8d | %5d %6d %9d | %5d %6d %9d\n", k, prog[k], hung[1, k], named[1, k], fa[1, k],
			       hung[2, k], named[2, k], fa[2, k] | "sort"
		close("sort")
		printf "  programs whose outcome differs (name, kind, Open MPI, MPICH): %d\n", d
		for (i = 1; i <= d; i++) print diff[i] | "sort"
		close("sort")
	}' "$a" "$b"
