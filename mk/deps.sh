#!/bin/sh
# deps.sh - makes sure the Debian packages EventSpace builds with are present, installing what is missing.
# `deps.sh bench` also wants what the benchmarks compare against.
set -u

missing=""
need() { # need PACKAGE COMMAND... : PACKAGE is missing unless COMMAND succeeds
	pkg=$1; shift
	"$@" >/dev/null 2>&1 || missing="$missing $pkg"
}
have_pc() { command -v pkg-config >/dev/null 2>&1 && pkg-config --exists "$1"; }

need pkg-config     command -v pkg-config
need liburing-dev   have_pc liburing
need libyaml-dev    have_pc yaml-0.1
need libhwloc-dev   have_pc hwloc
need check          have_pc check
need libopenmpi-dev have_pc ompi-c
need openmpi-bin    command -v mpirun
need libmpich-dev   test -f /usr/include/x86_64-linux-gnu/mpich/mpi.h # the collector for MPICH too (Open MPI stays mpicc)
need mpich          command -v mpiexec.hydra
need iproute2       command -v ip      # the remote test's network namespaces
need gfortran       command -v gfortran # Fortran MPI programs are tested too
need g++            command -v g++      # ... and a C++ one (its call sites' names demangled)
need hpcc           command -v hpcc    # real MPI programs the tests run under the collectors
need lammps         command -v lmp
need libotf2-trace-dev have_pc otf2    # esconvert writes OTF2 through it
need libdw-dev      have_pc libdw   # the readers map call sites to function, file and line
need libhdf5-openmpi-dev have_pc hdf5-openmpi # a real program writing through MPI-IO (tests)
need otf2-tools     command -v otf2-print # the tests read what it wrote
need python3        test -x /usr/bin/python3 # the tests parse the JSON it writes, and play another user (t_attack)
need gnuplot-nox    command -v gnuplot # esconvert --plot draws through it
need graphviz       command -v dot     # heartbeat --graph draws the wait-for graph through it
need libmicrohttpd-dev have_pc libmicrohttpd # esview serves the live view through it
need chromium       command -v chromium # the live view's tests run it headless
need curl           command -v curl     # ... and ask esview for its data
if [ "${1:-}" = bench ]; then # the collector benchmark compares with LTTng-UST
	need liblttng-ust-dev have_pc lttng-ust
	need lttng-tools      command -v lttng-sessiond
fi

[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "deps: missing Debian packages:$missing" >&2
	echo "deps: install them with: sudo apt-get install$missing" >&2
	exit 1
fi
echo "deps: installing missing Debian packages:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq || { echo "deps: apt-get update failed" >&2; exit 1; }
# shellcheck disable=SC2086
apt-get install -y -qq $missing >/dev/null || {
	echo "deps: apt-get install$missing failed" >&2; exit 1; }
echo "deps: installed:$missing"
