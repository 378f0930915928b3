/* mpi_hdf5.c - a program that writes and reads a dataset through parallel HDF5 (MPI-IO underneath), for t_io.sh: its file argv[1]. */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* Each rank writes N doubles of a 2*N dataset collectively, then reads the whole of it. */
enum { N = 65536 };

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int me, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	if (argc != 2) {
		fprintf(stderr, "usage: mpi_hdf5 FILE.h5\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	double *v = malloc(sizeof(double) * N * (size_t)np);
	if (!v)
		MPI_Abort(MPI_COMM_WORLD, 3);
	for (int i = 0; i < N; i++)
		v[i] = me * N + i;
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
	H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
	hid_t f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
	hsize_t dims = (hsize_t)N * (hsize_t)np, count = N, start = (hsize_t)me * N;
	hid_t space = H5Screate_simple(1, &dims, NULL);
	hid_t d = H5Dcreate2(f, "v", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	hid_t mem = H5Screate_simple(1, &count, NULL);
	H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, NULL, &count, NULL);
	hid_t xfer = H5Pcreate(H5P_DATASET_XFER);
	H5Pset_dxpl_mpio(xfer, H5FD_MPIO_COLLECTIVE);
	herr_t w = H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, xfer, v);
	H5Sselect_all(space);
	hid_t all = H5Screate_simple(1, &dims, NULL);
	herr_t r = H5Dread(d, H5T_NATIVE_DOUBLE, all, space, xfer, v);
	int bad = w < 0 || r < 0;
	for (int i = 0; i < N * np && !bad; i++)
		bad = v[i] != i;
	H5Sclose(all), H5Pclose(xfer), H5Sclose(mem), H5Dclose(d), H5Sclose(space), H5Fclose(f), H5Pclose(fapl);
	free(v);
	if (bad)
		fprintf(stderr, "mpi_hdf5: rank %d read back something else\n", me);
	MPI_Finalize();
	return bad;
}
