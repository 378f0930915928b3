! mpi_phases_f.F90 - phases from Fortran: ES_REGION_BEGIN/END and MPI_PCONTROL around known calls, for t_phases.sh.
! Per rank: fsolve 1 phase with 2 calls, "Pcontrol 5" 1 with 1 call.
program mpi_phases_f
  use mpi
  implicit none
  integer :: ierr
  call MPI_Init(ierr)
  call es_region_begin('fsolve')
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call es_region_end('fsolve')
  call MPI_Pcontrol(5)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Pcontrol(0)
  call MPI_Finalize(ierr)
end program mpi_phases_f
