! mpi_waits_f.F90 - known delays from Fortran for t_waits.sh, as mpi_waits.c: Late Sender, Late Broadcast, Wait at Barrier, Ibcast's root late; each rank writes its key calls' enters (system_clock) and lines.
! mpirun -np 3 mpi_waits_f D_MS DIR   ->  DIR/truth_f.RANK: STEP RANK ENTER_NS LINE
program mpi_waits_f
  use mpi
  implicit none
  integer :: ierr, me, n, d, x, req, u
  double precision :: t
  character(len=4096) :: arg, dir, path
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  if (command_argument_count() /= 2 .or. n /= 3) then
    if (me == 0) print *, 'usage: mpirun -np 3 mpi_waits_f D_MS DIR'
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if
  call get_command_argument(1, arg)
  read (arg, *) d
  call get_command_argument(2, dir)
  write (path, '(A,A,I0)') trim(dir), '/truth_f.', me
  open (newunit=u, file=trim(path), status='replace', action='write')
  x = 1

  ! Late Sender: rank 1 works, then sends to rank 0
  call sync()
  if (me == 1) then
    call work(d)
    t = clk()
    call MPI_Send(x, 1, MPI_INTEGER, 0, 1, MPI_COMM_WORLD, ierr)
    call key('late_sender', __LINE__ - 1, t)
  else if (me == 0) then
    t = clk()
    call MPI_Recv(x, 1, MPI_INTEGER, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call key('late_sender', __LINE__ - 1, t)
  else
    call work(d)
  end if

  ! Late Broadcast: the root works first
  call sync()
  if (me == 0) call work(d)
  t = clk()
  call MPI_Bcast(x, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call key('bcast', __LINE__ - 1, t)

  ! Wait at Barrier: rank 2 works first
  call sync()
  if (me == 2) call work(d)
  t = clk()
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call key('barrier', __LINE__ - 1, t)

  ! Ibcast: the root works, the others wait in MPI_Wait
  call sync()
  if (me == 0) then
    call work(d)
    t = clk()
    call MPI_Ibcast(x, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, req, ierr)
    call key('ibcast', __LINE__ - 1, t)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  else
    call MPI_Ibcast(x, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, req, ierr)
    call wait_for(req)
  end if

  call sync()
  close (u)
  call MPI_Finalize(ierr)

contains

  ! between steps: a barrier that waits only for what the scheduler did
  subroutine sync()
    double precision :: t0
    t0 = clk()
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    write (u, '(A,1X,I0,1X,F0.0,1X,I0,1X,F0.0)') 'sync', me, t0, __LINE__ - 1, clk()  ! with its leave
  end subroutine sync

  ! Through Open MPI's `use mpi`, gfortran's line table (12.2, -O0 as -O1)
  ! gives its calls of MPI_Wait the line of the unit around them, not their
  ! own (MPICH's module: their own): either is the wait's site
  ! (waits_check.py takes LINE/OTHER)
  subroutine wait_for(r)
    integer, intent(inout) :: r
    double precision :: t0
    t0 = clk()
    call MPI_Wait(r, MPI_STATUS_IGNORE, ierr)
    call key('ibcast', __LINE__ - 1, t0, __LINE__ - 5)
  end subroutine wait_for

  ! busy for ms milliseconds, in the phase "delay"
  subroutine work(ms)
    integer, intent(in) :: ms
    double precision :: t0
    call es_region_begin('delay')
    t0 = MPI_Wtime()
    do while (MPI_Wtime() - t0 < ms / 1000d0)
    end do
    call es_region_end('delay')
  end subroutine work

  ! MPI_Wtime is each process's own (Open MPI's starts at MPI_Init): the
  ! ranks' enters are compared on the host's monotonic clock, in ns, read
  ! just before the key call and written after it (no write between the
  ! two for the scheduler to stop the rank in)
  double precision function clk()
    integer(8) :: c, rate
    call system_clock(c, rate)
    clk = dble(c) * (1d9 / dble(rate))
  end function clk

  subroutine key(step, line, at, other)
    character(len=*), intent(in) :: step
    integer, intent(in) :: line
    double precision, intent(in) :: at
    integer, intent(in), optional :: other
    if (present(other)) then
      write (u, '(A,1X,I0,1X,F0.0,1X,I0,A,I0)') step, me, at, line, '/', other
    else
      write (u, '(A,1X,I0,1X,F0.0,1X,I0)') step, me, at, line
    end if
  end subroutine key
end program mpi_waits_f
