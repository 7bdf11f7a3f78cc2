! SPDX-License-Identifier: MIT
! Free form with "use mpi": derived datatypes (a vector of matrix rows, an
! indexed type, a struct built from absolute addresses and sent from and
! received into MPI_BOTTOM), sizes and extents, pack/unpack.
program f90_dtype
  use mpi
  implicit none
  integer :: ierr, rank, np, i, j, next, prev, nfail
  integer :: rowtype, idxtype, abstype, sz, pos
  integer :: blens(3), types(3), idisp(3), st(MPI_STATUS_SIZE)
  integer(kind=MPI_ADDRESS_KIND) :: disps(3), lb, extent
  real(kind=8) :: a(4, 5), b(4, 5)
  integer :: ivals(6), ivals_in(6)
  real(kind=8) :: dval, dval_in
  character(len=3) :: tag3, tag3_in
  character(len=64) :: packbuf
  integer :: rows(10)

  nfail = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  next = mod(rank + 1, np)
  prev = mod(rank + np - 1, np)

  ! Row 2 of a column-major 4x5 REAL*8 matrix: 5 elements, stride 4.
  do j = 1, 5
    do i = 1, 4
      a(i, j) = rank * 100 + i * 10 + j
    end do
  end do
  call MPI_Type_vector(5, 1, 4, MPI_DOUBLE_PRECISION, rowtype, ierr)
  call MPI_Type_commit(rowtype, ierr)
  call MPI_Type_size(rowtype, sz, ierr)
  if (sz /= 40) call fail('vector size')
  call MPI_Type_get_extent(rowtype, lb, extent, ierr)
  if (lb /= 0 .or. extent /= 136) call fail('vector extent')
  b = -1
  call MPI_Sendrecv(a(2, 1), 1, rowtype, next, 1, b(3, 1), 1, rowtype, prev, 1, &
                    MPI_COMM_WORLD, st, ierr)
  if (any(b(3, :) /= [(prev * 100 + 20 + j, j = 1, 5)])) call fail('vector data')
  if (any(b(1, :) /= -1) .or. any(b(4, :) /= -1)) call fail('vector wrote outside')
  call MPI_Get_elements(st, MPI_DOUBLE_PRECISION, i, ierr)
  if (i /= 5) call fail('get_elements')
  call MPI_Type_free(rowtype, ierr)
  if (rowtype /= MPI_DATATYPE_NULL) call fail('type_free nulls the handle')

  ! Indexed: elements 1, 4-5, 9-10 of an integer array.
  blens = [1, 2, 2]
  idisp = [0, 3, 8]
  rows = [(rank * 10 + i, i = 1, 10)]
  call MPI_Type_indexed(3, blens, idisp, MPI_INTEGER, idxtype, ierr)
  call MPI_Type_commit(idxtype, ierr)
  ivals_in = 0
  call MPI_Sendrecv(rows, 1, idxtype, next, 2, ivals_in, 5, MPI_INTEGER, prev, 2, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  if (any(ivals_in(1:5) /= prev * 10 + [1, 4, 5, 9, 10])) call fail('indexed data')
  call MPI_Type_free(idxtype, ierr)

  ! Struct from absolute addresses of three unrelated variables, used
  ! with MPI_BOTTOM on both sides.
  ivals = [(rank + i, i = 1, 6)]
  dval = rank + 0.125d0
  write (tag3, '(a,i2.2)') 'r', rank
  call MPI_Get_address(ivals, disps(1), ierr)
  call MPI_Get_address(dval, disps(2), ierr)
  call MPI_Get_address(tag3, disps(3), ierr)
  blens = [6, 1, 3]
  types = [MPI_INTEGER, MPI_DOUBLE_PRECISION, MPI_CHARACTER]
  call MPI_Type_create_struct(3, blens, disps, types, abstype, ierr)
  call MPI_Type_commit(abstype, ierr)
  call MPI_Isend(MPI_BOTTOM, 1, abstype, next, 3, MPI_COMM_WORLD, i, ierr)
  call MPI_Type_free(abstype, ierr)
  call MPI_Get_address(ivals_in, disps(1), ierr)
  call MPI_Get_address(dval_in, disps(2), ierr)
  call MPI_Get_address(tag3_in, disps(3), ierr)
  call MPI_Type_create_struct(3, blens, disps, types, abstype, ierr)
  call MPI_Type_commit(abstype, ierr)
  call MPI_Recv(MPI_BOTTOM, 1, abstype, prev, 3, MPI_COMM_WORLD, st, ierr)
  call MPI_Wait(i, MPI_STATUS_IGNORE, ierr)
  if (any(ivals_in /= [(prev + j, j = 1, 6)])) call fail('MPI_BOTTOM integers')
  if (dval_in /= prev + 0.125d0) call fail('MPI_BOTTOM REAL*8')
  write (tag3, '(a,i2.2)') 'r', prev
  if (tag3_in /= tag3) call fail('MPI_BOTTOM CHARACTER')
  call MPI_Get_count(st, abstype, i, ierr)
  if (i /= 1) call fail('struct count')
  call MPI_Type_free(abstype, ierr)

  ! Pack an integer and a REAL*8 into a CHARACTER buffer and back.
  pos = 0
  call MPI_Pack(rank, 1, MPI_INTEGER, packbuf, len(packbuf), pos, MPI_COMM_WORLD, ierr)
  call MPI_Pack(dval, 1, MPI_DOUBLE_PRECISION, packbuf, len(packbuf), pos, MPI_COMM_WORLD, ierr)
  if (pos /= 12) call fail('pack position')
  pos = 0
  call MPI_Unpack(packbuf, len(packbuf), pos, i, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call MPI_Unpack(packbuf, len(packbuf), pos, dval_in, 1, MPI_DOUBLE_PRECISION, &
                  MPI_COMM_WORLD, ierr)
  if (i /= rank .or. dval_in /= dval) call fail('unpack')

  call MPI_Allreduce(MPI_IN_PLACE, nfail, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. nfail == 0) write (*, '(a,i0,a)') 'f90_dtype: OK (', np, ' ranks)'
  call MPI_Finalize(ierr)
  if (nfail /= 0) stop 1
contains
  subroutine fail(what)
    character(len=*), intent(in) :: what
    write (*, '(a,a)') 'FAIL: ', what
    nfail = nfail + 1
  end subroutine fail
end program f90_dtype
