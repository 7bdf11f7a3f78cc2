! SPDX-License-Identifier: MIT
! "use mpi_f08": TYPE(MPI_Comm) and other handle types, TYPE(MPI_Status)
! fields, ierror omitted or present, handle comparison, MPI_IN_PLACE and
! MPI_STATUS_IGNORE, and a struct type sent from MPI_BOTTOM.
program f08_basic
  use mpi_f08
  implicit none
  type(MPI_Comm) :: dup
  type(MPI_Status) :: st, sts(2)
  type(MPI_Request) :: reqs(2)
  type(MPI_Datatype) :: abstype, types(2)
  integer :: rank, np, next, prev, n, nfail, ierr, cls, i
  integer :: blens(2)
  integer(kind=MPI_ADDRESS_KIND) :: disps(2)
  real(kind=8) :: x(6), y(6), s
  integer :: iv, iv_in
  logical :: flag

  nfail = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  if (ierr /= MPI_SUCCESS) call fail('ierror present')
  next = mod(rank + 1, np)
  prev = mod(rank + np - 1, np)

  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  if (dup == MPI_COMM_WORLD .or. dup == MPI_COMM_NULL) call fail('comm_dup handle')

  x = [(rank * 10 + i, i = 1, 6)]
  call MPI_Irecv(y, 6, MPI_DOUBLE_PRECISION, prev, 4, dup, reqs(1))
  call MPI_Isend(x, 6, MPI_DOUBLE_PRECISION, next, 4, dup, reqs(2))
  call MPI_Waitall(2, reqs, sts)
  if (sts(1)%MPI_SOURCE /= prev .or. sts(1)%MPI_TAG /= 4) call fail('status fields')
  call MPI_Get_count(sts(1), MPI_DOUBLE_PRECISION, n)
  if (n /= 6) call fail('get_count')
  if (any(y /= [(prev * 10 + i, i = 1, 6)])) call fail('p2p data')
  if (reqs(1) /= MPI_REQUEST_NULL) call fail('request freed')

  s = rank
  call MPI_Allreduce(MPI_IN_PLACE, s, 1, MPI_DOUBLE_PRECISION, MPI_SUM, dup)
  if (s /= np * (np - 1) / 2) call fail('allreduce in place')

  ! MPI_BOTTOM with absolute addresses.
  iv = rank + 1000
  call MPI_Get_address(iv, disps(1))
  call MPI_Get_address(x, disps(2))
  blens = [1, 6]
  types(1) = MPI_INTEGER
  types(2) = MPI_DOUBLE_PRECISION
  call MPI_Type_create_struct(2, blens, disps, types, abstype)
  call MPI_Type_commit(abstype)
  if (rank == 0) then
    call MPI_Send(MPI_BOTTOM, 1, abstype, next, 5, dup)
  end if
  if (rank == 1) then
    call MPI_Get_address(iv_in, disps(1))
    call MPI_Get_address(y, disps(2))
    call MPI_Type_free(abstype)
    call MPI_Type_create_struct(2, blens, disps, types, abstype)
    call MPI_Type_commit(abstype)
    call MPI_Recv(MPI_BOTTOM, 1, abstype, 0, 5, dup, st)
    if (iv_in /= 1000 .or. any(y /= [(i, i = 1, 6)])) call fail('MPI_BOTTOM struct')
    if (st%MPI_SOURCE /= 0) call fail('recv status')
  end if
  call MPI_Type_free(abstype)

  ! Errors through the optional ierror.
  call MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN)
  call MPI_Send(iv, 1, MPI_INTEGER, np + 1, 0, dup, ierr)
  call MPI_Error_class(ierr, cls)
  if (cls /= MPI_ERR_RANK) call fail('MPI_ERR_RANK through ierror')
  call MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, dup, flag, MPI_STATUS_IGNORE)
  if (flag) call fail('iprobe found a stray message')

  call MPI_Comm_free(dup)
  if (dup /= MPI_COMM_NULL) call fail('comm_free nulls the handle')
  call MPI_Allreduce(MPI_IN_PLACE, nfail, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0 .and. nfail == 0) write (*, '(a,i0,a)') 'f08_basic: OK (', np, ' ranks)'
  call MPI_Finalize()
  if (nfail /= 0) stop 1
contains
  subroutine fail(what)
    character(len=*), intent(in) :: what
    write (*, '(a,a)') 'FAIL: ', what
    nfail = nfail + 1
  end subroutine fail
end program f08_basic
