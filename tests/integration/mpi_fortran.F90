! mpi_fortran.F90 - an MPI program in Fortran, built with mpif.h, use mpi or use mpi_f08, that writes down what libescollect must record.
!
! Built three times (-DBINDING=77, 90 or 8).  Run on 2 ranks under
! libescollect.so with ES_EXPECT_DIR set: rank N writes expect.rN there,
! which mpi_expect holds against the trace.  Every result is checked, so
! the Fortran entry points are shown to keep MPI's semantics too.
program mpi_fortran
#if BINDING == 8
  use mpi_f08
#elif BINDING == 90
  use mpi
#endif
  implicit none
#if BINDING == 77
  include 'mpif.h'
#endif
#if BINDING == 8
#define HANDLE(t) type(t)
#define STATUS type(MPI_Status) :: st
#else
#define HANDLE(t) integer
#define STATUS integer :: st(MPI_STATUS_SIZE)
#endif
  integer :: ierr, me, np, peer, i, u, flag_count, cw
  integer :: a(4), b(4), one, total
  integer :: counts(2), displs(2)
  logical :: flag
  character(len=4096) :: dir
  character(len=16) :: rank_name
  HANDLE(MPI_Request) :: rq(2)
  HANDLE(MPI_Comm) :: half
  HANDLE(MPI_Win) :: win
  integer(kind=MPI_ADDRESS_KIND) :: wsize, disp
  integer, volatile :: wbuf(4)   ! the window: the compiler must not keep it in registers
  STATUS
  integer :: failures

  failures = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  peer = 1 - me
  call get_environment_variable('ES_EXPECT_DIR', dir)
  write (rank_name, '(I0)') me
  open (newunit=u, file=trim(dir)//'/expect.r'//trim(rank_name), status='replace')
  if (np /= 2) call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  call expect('MPI_Init', me, 0, 0)
  cw = 0

  ! collectives on MPI_COMM_WORLD, each numbered
  do i = 1, 3
    one = me + i
    call MPI_Allreduce(one, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call expect('MPI_Allreduce', -1, 4, cw)
    cw = cw + 1
    call verify(total == 1 + 2 * i, 'MPI_Allreduce')
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call expect('MPI_Barrier', -1, 0, cw)
    cw = cw + 1
  end do
  ! in place: Fortran's MPI_IN_PLACE is not C's
  total = me + 1
  call MPI_Allreduce(MPI_IN_PLACE, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call expect('MPI_Allreduce', -1, 4, cw)
  cw = cw + 1
  call verify(total == 3, 'MPI_Allreduce in place')
  a = me
  call MPI_Bcast(a, 4, MPI_INTEGER, 1, MPI_COMM_WORLD, ierr)
  call expect('MPI_Bcast', 1, 16, cw)
  cw = cw + 1
  call verify(a(4) == 1, 'MPI_Bcast')
  call MPI_Reduce(me, total, 1, MPI_INTEGER, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
  call expect('MPI_Reduce', 0, 4, cw)
  cw = cw + 1
  call MPI_Gather(me, 1, MPI_INTEGER, b, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call expect('MPI_Gather', 0, 4, cw)
  cw = cw + 1
  counts = 1
  displs = (/ 0, 1 /)
  call MPI_Alltoallv(a, counts, displs, MPI_INTEGER, b, counts, displs, MPI_INTEGER, &
                     MPI_COMM_WORLD, ierr)
  call expect('MPI_Alltoallv', -1, 8, cw)
  cw = cw + 1

  ! point-to-point, with MPI_STATUS_IGNORE and a status, any source
  a = (/ 1, 2, 3, 4 /)
  if (me == 0) then
    call MPI_Send(a, 4, MPI_INTEGER, 1, 5, MPI_COMM_WORLD, ierr)
    call expect('MPI_Send', 1, 16, 5)
    call MPI_Ssend(a, 2, MPI_INTEGER, 1, 6, MPI_COMM_WORLD, ierr)
    call expect('MPI_Ssend', 1, 8, 6)
  else
    call MPI_Recv(b, 4, MPI_INTEGER, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call expect('MPI_Recv', 0, 16, 5)
    call verify(b(3) == 3, 'MPI_Recv')
    call MPI_Recv(b, 4, MPI_INTEGER, 0, MPI_ANY_TAG, MPI_COMM_WORLD, st, ierr)
    call expect('MPI_Recv', 0, 8, 6)
#if BINDING == 8
    call verify(st%MPI_TAG == 6, 'MPI_Recv status')
#else
    call verify(st(MPI_TAG) == 6, 'MPI_Recv status')
#endif
  end if
  call MPI_Irecv(b, 4, MPI_INTEGER, peer, 7, MPI_COMM_WORLD, rq(1), ierr)
  call expect('MPI_Irecv', peer, 16, 7)
  ! synchronous: a small MPI_Isend Open MPI may complete inline, within
  ! the call, whose completion is then recorded there (not at the wait)
  call MPI_Issend(a, 4, MPI_INTEGER, peer, 7, MPI_COMM_WORLD, rq(2), ierr)
  call expect('MPI_Issend', peer, 16, 7)
  call MPI_Waitall(2, rq, MPI_STATUSES_IGNORE, ierr)
  ! each request's completion (the receive's with what came), then the wait
  call expect('MPI_Irecv/done', peer, 16, 7)
  call expect('MPI_Issend/done', peer, 16, 7)
  call expect('MPI_Waitall', 0, 0, 2)
  call MPI_Sendrecv(a, 1, MPI_INTEGER, peer, 8, b, 1, MPI_INTEGER, peer, 8, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE, ierr)
  ! the send, then what came
  call expect('MPI_Sendrecv', peer, 4, 8)
  call expect('MPI_Sendrecv/done', peer, 4, 8)
  ! a poll loop: one tuple for the test that completes, arg = polls
  call MPI_Irecv(b, 1, MPI_INTEGER, peer, 9, MPI_COMM_WORLD, rq(1), ierr)
  call expect('MPI_Irecv', peer, 4, 9)
  call MPI_Send(a, 1, MPI_INTEGER, peer, 9, MPI_COMM_WORLD, ierr)
  call expect('MPI_Send', peer, 4, 9)
  flag = .false.
  flag_count = 0
  do while (.not. flag)
    call MPI_Test(rq(1), flag, MPI_STATUS_IGNORE, ierr)
    flag_count = flag_count + 1
  end do
  call expect('MPI_Irecv/done', peer, 4, 9)
  call expect('MPI_Test', -1, 0, flag_count)

  ! a nonblocking collective: its call, its completion, the wait
  one = me + 1
  call MPI_Iallreduce(one, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, rq(1), ierr)
  call expect('MPI_Iallreduce', -1, 4, cw)
  call MPI_Wait(rq(1), MPI_STATUS_IGNORE, ierr)
  call expect('MPI_Iallreduce/done', -1, 4, cw)
  call expect('MPI_Wait', -2, -2, -2)
  cw = cw + 1
  call verify(total == 3, 'MPI_Iallreduce')

  ! a communicator of its own, made known and freed
  call MPI_Comm_split(MPI_COMM_WORLD, 0, me, half, ierr)
  call expect('MPI_Comm_split', -1, 0, cw)
  cw = cw + 1
  call MPI_Barrier(half, ierr)
  call expect('MPI_Barrier', -1, 0, 0)
  call MPI_Comm_free(half, ierr)
  call expect('MPI_Comm_free', -1, 0, 1)

  ! persistent requests
  call MPI_Send_init(a, 2, MPI_INTEGER, peer, 10, MPI_COMM_WORLD, rq(1), ierr)
  call expect('MPI_Send_init', peer, 8, 10)
  call MPI_Recv_init(b, 2, MPI_INTEGER, peer, 10, MPI_COMM_WORLD, rq(2), ierr)
  call expect('MPI_Recv_init', peer, 8, 10)
  call MPI_Startall(2, rq, ierr)
  call expect('MPI_Startall', peer, 8, 10)
  call expect('MPI_Startall/recv', peer, 8, 10)
  call MPI_Waitall(2, rq, MPI_STATUSES_IGNORE, ierr)
  call expect('MPI_Send_init/done', peer, 8, 10)
  call expect('MPI_Recv_init/done', peer, 8, 10)
  call expect('MPI_Waitall', 0, 0, 2)
  call MPI_Request_free(rq(1), ierr)
  call expect('MPI_Request_free', -1, 0, 0)
  call MPI_Request_free(rq(2), ierr)
  call expect('MPI_Request_free', -1, 0, 0)

  ! one-sided
  wbuf = me
  wsize = 16
  call MPI_Win_create(wbuf, wsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call expect('MPI_Win_create', -1, 0, cw)
  cw = cw + 1
  call MPI_Win_fence(0, win, ierr)
  call expect('MPI_Win_fence', -1, 0, 0)
  disp = 1
  call MPI_Put(a, 2, MPI_INTEGER, peer, disp, 2, MPI_INTEGER, win, ierr)
  call expect('MPI_Put', peer, 8, -2)
  call MPI_Win_fence(0, win, ierr)
  call expect('MPI_Win_fence', -1, 0, 1)
  call verify(wbuf(2) == 1 .and. wbuf(3) == 2, 'MPI_Put')
  call MPI_Win_free(win, ierr)
  call expect('MPI_Win_free', -1, 0, 2)

  call expect('MPI_Finalize', me, 0, 0)
  close (u)
  call MPI_Finalize(ierr)
  if (failures > 0) stop 1

contains

  ! one expected tuple: -1 for none, -2 for any
  subroutine expect(name, element, size, arg)
    character(len=*), intent(in) :: name
    integer, intent(in) :: element, size, arg
    write (u, '(A,3(1X,A))') name, field(element), field(size), field(arg)
  end subroutine

  function field(v) result(s)
    integer, intent(in) :: v
    character(len=12) :: s
    if (v == -1) then
      s = '-'
    else if (v == -2) then
      s = '*'
    else
      write (s, '(I0)') v
    end if
  end function

  subroutine verify(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      write (0, '(A,I0,A,A)') 'rank ', me, ': wrong result from ', what
      failures = failures + 1
    end if
  end subroutine
end program
