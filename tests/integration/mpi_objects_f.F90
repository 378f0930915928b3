! mpi_objects_f.F90 - a Fortran program with an object monitors steer (es_object.h's Fortran calls): a writable double, a read-only integer, a method; it runs until a monitor calls fsim.stop (or 120 s).
module fsim_state
  implicit none
  integer :: kicks = 0, stopping = 0
  double precision :: last_kick = 0d0
contains
  subroutine kick(x)
    double precision :: x
    kicks = kicks + 1
    last_kick = x
  end subroutine kick
  subroutine stop_it(x)
    double precision :: x
    stopping = 1
    if (x < -1d300) stopping = 2
  end subroutine stop_it
end module fsim_state

program mpi_objects_f
  use mpi
  use fsim_state
  implicit none
  integer :: ierr, rank, obj, steps, go, all, applied, i
  double precision :: gain, w(3), t0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  gain = 1d0
  w = 0d0
  steps = 0
  applied = 0
  call ES_OBJECT_CREATE('fsim', 'a Fortran simulation', obj)
  call ES_OBJECT_DOUBLE(obj, 'gain', gain, 1, 1, 0d0, 5d0, 'a gain')
  call ES_OBJECT_DOUBLE(obj, 'w', w(1), 3, 1, -2d0, 2d0, 'weights')  ! an array: its first element
  call ES_OBJECT_INT(obj, 'steps', steps, 1, 0, 0, 0, 'steps made')
  call ES_OBJECT_METHOD(obj, 'kick', kick, 'count a kick')
  call ES_OBJECT_METHOD(obj, 'stop', stop_it, 'end the run')
  t0 = MPI_Wtime()
  do
    steps = steps + 1
    call ES_OBJECT_PUBLISH(obj)
    call ES_OBJECT_SYNC()
    go = 1
    if (stopping /= 0 .or. MPI_Wtime() - t0 > 120d0) go = 0
    call MPI_Allreduce(go, all, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, ierr)
    if (all == 0) exit
    do i = 1, 20000
      applied = applied + mod(i, 2)
    end do
    applied = 0
  end do
  call ES_OBJECT_SYNC()  ! a stop asked of every rank may have ended the loop elsewhere first
  write (*, '(a,i0,a,f6.3,a,3f7.3,a,i0,a,f6.3)') 'rank ', rank, ': gain=', gain, ' w=', w, &
    ' kicks=', kicks, ' last_kick=', last_kick
  call MPI_Finalize(ierr)
end program mpi_objects_f
