// mpi_sites_cxx.cc - an MPI call inside a C++ template method in a namespace, inlined at -O2: its call site must be named as its programmer wrote it.
#include <mpi.h>

namespace solver {
template <typename T> struct Halo {
	void exchange(T *out, T *in);
};

template <typename T> void Halo<T>::exchange(T *out, T *in)
{
	int r, n;
	MPI_Comm_rank(MPI_COMM_WORLD, &r);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	MPI_Sendrecv(out, 1, MPI_DOUBLE, (r + 1) % n, 1, in, 1, MPI_DOUBLE, (r + n - 1) % n, 1, MPI_COMM_WORLD, // site:cxx
		     MPI_STATUS_IGNORE);
}
} // namespace solver

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	double a = 1, b = 0;
	solver::Halo<double> h;
	h.exchange(&a, &b);
	MPI_Finalize();
	return 0;
}
