/* mpi_io.c - MPI-IO of known bytes through every kind of read and write, for t_io.sh: two ranks, files in the directory argv[1]. */
#include <mpi.h>
#include <stdio.h>

/*
 * Per rank, on DIR/data: 8 writes of 908 bytes and 5 reads of 760 bytes
 * (each call's bytes below), 18 recorded calls in all (open, close,
 * sync and the two split ends besides).  Rank 0 alone writes 1000 bytes
 * to DIR/other: 1 write, 3 calls.  t_io.sh holds the profile to this.
 */
int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int me, buf[256] = { 0 };
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	if (argc != 2) {
		fprintf(stderr, "usage: mpi_io DIR\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	char path[4096];
	snprintf(path, sizeof(path), "%s/data", argv[1]);
	MPI_File fh;
	MPI_Status st;
	MPI_Request rq;
	MPI_Offset base = me * 4096;
	if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh))
		MPI_Abort(MPI_COMM_WORLD, 3);
	MPI_File_write_at(fh, base, buf, 100, MPI_INT, &st);                  /* 400 */
	MPI_File_write_at_all(fh, 8192 + base, buf, 50, MPI_INT, &st);        /* 200 */
	MPI_File_seek(fh, 16384 + base, MPI_SEEK_SET);
	MPI_File_write(fh, buf, 10, MPI_INT, &st);                            /* 40 */
	MPI_File_write_all(fh, buf, 20, MPI_INT, &st);                        /* 80 */
	MPI_File_iwrite_at(fh, 32768 + base, buf, 30, MPI_INT, &rq);          /* 120 */
	MPI_Wait(&rq, &st);
	MPI_File_write_at_all_begin(fh, 40960 + base, buf, 5, MPI_INT);       /* 20 */
	MPI_File_write_at_all_end(fh, buf, &st);
	MPI_File_write_shared(fh, buf, 8, MPI_INT, &st);                      /* 32 */
	MPI_File_write_ordered(fh, buf, 4, MPI_INT, &st);                     /* 16 */
	MPI_File_sync(fh);
	MPI_File_read_at(fh, base, buf, 100, MPI_INT, &st);                   /* 400 */
	MPI_File_read_at_all(fh, 8192 + base, buf, 50, MPI_INT, &st);         /* 200 */
	MPI_File_seek(fh, base, MPI_SEEK_SET);
	MPI_File_read(fh, buf, 25, MPI_INT, &st);                             /* 100 */
	MPI_File_iread_at(fh, base, buf, 10, MPI_INT, &rq);                   /* 40 */
	MPI_Wait(&rq, &st);
	MPI_File_read_all_begin(fh, buf, 5, MPI_INT);                         /* 20 */
	MPI_File_read_all_end(fh, buf, &st);
	MPI_File_close(&fh);
	if (me == 0) {
		char b[1000] = { 0 };
		snprintf(path, sizeof(path), "%s/other", argv[1]);
		if (MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh))
			MPI_Abort(MPI_COMM_WORLD, 4);
		MPI_File_write(fh, b, 1000, MPI_BYTE, &st);                   /* 1000 */
		MPI_File_close(&fh);
	}
	MPI_Finalize();
	return 0;
}
