! mpi_io_f.F90 - MPI-IO from Fortran, for t_io.sh: each rank writes 40 integers (160 bytes) at its offset of DIR/fdata and reads them back; the file's name comes blank-padded, as Fortran passes it.
program mpi_io_f
  use mpi
  implicit none
  integer :: ierr, me, fh, buf(40)
  integer(kind=MPI_OFFSET_KIND) :: off
  character(len=4096) :: dir
  integer :: st(MPI_STATUS_SIZE)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call get_command_argument(1, dir)
  buf = me
  call MPI_File_open(MPI_COMM_WORLD, trim(dir) // '/fdata', MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
  if (ierr /= MPI_SUCCESS) call MPI_Abort(MPI_COMM_WORLD, 3, ierr)
  off = me * 160
  call MPI_File_write_at(fh, off, buf, 40, MPI_INTEGER, st, ierr)
  call MPI_File_sync(fh, ierr)
  call MPI_File_read_at(fh, off, buf, 40, MPI_INTEGER, st, ierr)
  call MPI_File_close(fh, ierr)
  if (any(buf /= me)) call MPI_Abort(MPI_COMM_WORLD, 4, ierr)
  call MPI_Finalize(ierr)
end program mpi_io_f
