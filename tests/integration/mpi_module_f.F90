! mpi_module_f.F90 - MPI calls inside Fortran module procedures, one nested in another by contains: their sites must read module::name.
module halo_mod
  use mpi
  implicit none
contains
  subroutine exchange(x, n)
    integer, intent(in) :: n
    double precision, intent(inout) :: x(n)
    double precision :: y(n)
    integer :: me, np, ierr, st(MPI_STATUS_SIZE)
    call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
    call MPI_Sendrecv(x, n, MPI_DOUBLE_PRECISION, mod(me + 1, np), 7, y, n, MPI_DOUBLE_PRECISION, &
                      mod(me + np - 1, np), 7, MPI_COMM_WORLD, st, ierr)
    call settle()
    x = y
  contains
    subroutine settle()
      integer :: ierr2
      call MPI_Barrier(MPI_COMM_WORLD, ierr2)
    end subroutine settle
  end subroutine exchange
end module halo_mod

program mpi_module_f
  use mpi
  use halo_mod
  implicit none
  integer :: ierr, i
  double precision :: x(16)
  call MPI_Init(ierr)
  x = 1.0d0
  do i = 1, 5
    call exchange(x, 16)
  end do
  call MPI_Finalize(ierr)
end program mpi_module_f
