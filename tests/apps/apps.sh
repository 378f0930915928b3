# apps.sh - the real MPI programs from Debian that tests and benchmarks run: LAMMPS's melt and hpcc's example input.
apps_dir=$(cd "$(dirname "$0")/../apps" && pwd)

# lammps_melt DIR STEPS [PREFIX...]: melt on 2 ranks in DIR (PREFIX: esrun and its
# options, or nothing); prints its steps per second ("Loop time of T on 2 procs for N steps").
lammps_melt() {
	d=$1 steps=$2; shift 2
	(cd "$d" && mpirun --oversubscribe --allow-run-as-root -np 2 "$@" lmp -in "$apps_dir/in.melt" \
		-var steps "$steps" -log none -screen lmp.out >/dev/null) || return 1
	awk '/^Loop time of/ { printf "%.3f\n", $9 / $4 }' "$d/lmp.out"
}

# hpcc_input DIR: Debian's example hpccinf.txt for 2 ranks (P=1, Q=2).
hpcc_input() {
	sed -e 's/^2            Ps/1            Ps/' /usr/share/doc/hpcc/examples/_hpccinf.txt >"$1/hpccinf.txt"
}

# hpcc_run DIR [prefix...]: hpcc on 2 ranks in DIR; prints MPIRandomAccess's GUP/s.
hpcc_run() {
	d=$1; shift
	rm -f "$d/hpccoutf.txt"
	(cd "$d" && mpirun --oversubscribe --allow-run-as-root -np 2 "$@" hpcc >/dev/null 2>&1) || return 1
	sed -n 's/^MPIRandomAccess_GUPs=//p' "$d/hpccoutf.txt"
}
