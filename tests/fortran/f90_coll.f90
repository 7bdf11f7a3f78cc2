! SPDX-License-Identifier: MIT
! Free form with "use mpi": collectives with MPI_IN_PLACE; reductions on
! REAL*8, DOUBLE COMPLEX, LOGICAL and 2INTEGER (MAXLOC); a CHARACTER
! broadcast; communicator split; attributes with Fortran callbacks.
module f90_coll_check
  implicit none
  integer :: nfail = 0
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      write (*, '(a,a)') 'FAIL: ', what
      nfail = nfail + 1
    end if
  end subroutine check
end module f90_coll_check

subroutine copy_plus_one(oldcomm, keyval, extra, valin, valout, flag, ierr)
  use mpi, only: MPI_ADDRESS_KIND, MPI_SUCCESS
  implicit none
  integer :: oldcomm, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: extra, valin, valout
  logical :: flag
  valout = valin + extra
  flag = .true.
  ierr = MPI_SUCCESS
end subroutine copy_plus_one

subroutine count_delete(comm, keyval, val, extra, ierr)
  use mpi, only: MPI_ADDRESS_KIND, MPI_SUCCESS
  implicit none
  integer :: comm, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: val, extra
  integer :: ndeleted
  common /deleted/ ndeleted
  ndeleted = ndeleted + 1
  ierr = MPI_SUCCESS
end subroutine count_delete

program f90_coll
  use mpi
  use f90_coll_check
  implicit none
  integer :: ierr, rank, np, i, half, sub, subrank, subsize, keyval
  integer :: ndeleted
  common /deleted/ ndeleted
  real(kind=8) :: d(8), dmax
  complex(kind=8) :: z(3), zp
  logical :: land, lor, flag
  integer :: pair(2), gathered(64)
  character(len=16) :: word
  character(len=MPI_MAX_PROCESSOR_NAME) :: name
  integer(kind=MPI_ADDRESS_KIND) :: val, tagub
  integer :: dupcomm
  external :: copy_plus_one, count_delete

  ndeleted = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)

  ! REAL*8 sum and max, in place.
  do i = 1, 8
    d(i) = rank + i * 0.5d0
  end do
  call MPI_Allreduce(MPI_IN_PLACE, d, 8, MPI_REAL8, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS, 'allreduce ierror')
  call check(abs(d(3) - (np * (np - 1) / 2 + np * 1.5d0)) < 1d-12, 'REAL*8 sum')
  dmax = rank * 2.5d0
  call MPI_Allreduce(MPI_IN_PLACE, dmax, 1, MPI_DOUBLE_PRECISION, MPI_MAX, &
                     MPI_COMM_WORLD, ierr)
  call check(dmax == (np - 1) * 2.5d0, 'REAL*8 max')

  ! DOUBLE COMPLEX sum and product (reduce in place at the root).
  z = cmplx(rank + 1, -rank, kind=8)
  if (rank == 0) then
    call MPI_Reduce(MPI_IN_PLACE, z, 3, MPI_DOUBLE_COMPLEX, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
    call check(z(2) == cmplx(np * (np + 1) / 2, -np * (np - 1) / 2, kind=8), &
               'DOUBLE COMPLEX sum')
  else
    call MPI_Reduce(z, z, 3, MPI_DOUBLE_COMPLEX, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  end if
  z(1) = cmplx(0, 1, kind=8)
  call MPI_Allreduce(MPI_IN_PLACE, z, 1, MPI_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD, ierr)
  zp = cmplx(0, 1, kind=8)**np
  call check(abs(z(1) - zp) < 1d-12, 'DOUBLE COMPLEX product')

  ! LOGICAL and / or.
  land = rank /= 1
  lor = rank == np - 1
  call MPI_Allreduce(MPI_IN_PLACE, land, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, lor, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD, ierr)
  call check(.not. land .and. lor, 'LOGICAL land/lor')

  ! MAXLOC on 2INTEGER.
  pair = [mod(rank * 7, np), rank]
  call MPI_Allreduce(MPI_IN_PLACE, pair, 1, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
  call check(pair(1) == np - 1, '2INTEGER maxloc value')

  ! Allgather in place, gather, CHARACTER broadcast.
  gathered = -1
  gathered(rank + 1) = rank * rank
  call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, gathered, 1, MPI_INTEGER, &
                     MPI_COMM_WORLD, ierr)
  call check(all(gathered(1:np) == [(i * i, i = 0, np - 1)]), 'allgather in place')
  word = ' '
  if (rank == 0) word = 'ferry-fortran'
  call MPI_Bcast(word, len(word), MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)
  call check(word == 'ferry-fortran', 'CHARACTER bcast')
  call MPI_Gather(rank + 100, 1, MPI_INTEGER, gathered, 1, MPI_INTEGER, np - 1, &
                  MPI_COMM_WORLD, ierr)
  if (rank == np - 1) call check(gathered(np) == np - 1 + 100, 'gather')

  ! Split into halves; reduce inside each.
  half = merge(0, 1, rank < (np + 1) / 2)
  call MPI_Comm_split(MPI_COMM_WORLD, half, -rank, sub, ierr)
  call MPI_Comm_rank(sub, subrank, ierr)
  call MPI_Comm_size(sub, subsize, ierr)
  i = 1
  call MPI_Allreduce(MPI_IN_PLACE, i, 1, MPI_INTEGER, MPI_SUM, sub, ierr)
  call check(i == subsize, 'split comm size')
  ! CHARACTER arguments: trailing blanks dropped going in, blank padding
  ! coming back, the length without padding.
  call MPI_Comm_set_name(sub, 'half comm   ', ierr)
  name = 'x'
  call MPI_Comm_get_name(sub, name, i, ierr)
  call check(i == 9 .and. name == 'half comm', 'comm name round trip')
  call MPI_Get_processor_name(name, i, ierr)
  call check(i > 0 .and. i <= MPI_MAX_PROCESSOR_NAME .and. name(i+1:) == ' ', &
             'processor name blank-padded')
  call MPI_Comm_free(sub, ierr)
  call check(sub == MPI_COMM_NULL, 'comm_free nulls the handle')

  ! Predefined attribute read as an integer; a keyval with Fortran
  ! callbacks copies (value + extra_state) on dup and counts deletes.
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, tagub, flag, ierr)
  call check(flag .and. tagub >= 32767, 'MPI_TAG_UB attribute')
  call MPI_Comm_create_keyval(copy_plus_one, count_delete, keyval, 5_MPI_ADDRESS_KIND, ierr)
  call MPI_Comm_set_attr(MPI_COMM_WORLD, keyval, 37_MPI_ADDRESS_KIND, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, dupcomm, ierr)
  call MPI_Comm_get_attr(dupcomm, keyval, val, flag, ierr)
  call check(flag .and. val == 42, 'Fortran copy callback')
  call MPI_Comm_free(dupcomm, ierr)
  call check(ndeleted == 1, 'Fortran delete callback')
  call MPI_Comm_delete_attr(MPI_COMM_WORLD, keyval, ierr)
  call MPI_Comm_free_keyval(keyval, ierr)

  call MPI_Allreduce(MPI_IN_PLACE, nfail, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. nfail == 0) write (*, '(a,i0,a)') 'f90_coll: OK (', np, ' ranks)'
  call MPI_Finalize(ierr)
  if (nfail /= 0) stop 1
end program f90_coll
