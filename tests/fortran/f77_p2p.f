! SPDX-License-Identifier: MIT
! Fixed form with mpif.h: point-to-point with statuses (source, tag,
! count, MPI_STATUS_IGNORE, MPI_STATUSES_IGNORE, wildcards), a CHARACTER
! buffer, and error codes returned through IERROR under MPI_ERRORS_RETURN.
      PROGRAM F77P2P
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NP, I, N, CLS, LEN, PEER
      INTEGER ST(MPI_STATUS_SIZE), STS(MPI_STATUS_SIZE, 4), REQS(4)
      INTEGER IBUF(100), IBAD
      REAL*8 DBUF(50)
      CHARACTER*12 MSG
      CHARACTER*(MPI_MAX_ERROR_STRING) ESTR
      LOGICAL FLAG
      INTEGER NFAIL
      COMMON /FAILS/ NFAIL

      NFAIL = 0
      CALL MPI_INIT(IERR)
      CALL CHECK(IERR .EQ. MPI_SUCCESS, 'MPI_INIT ierror')
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NP, IERR)

!     Every rank sends 10+rank integers to rank 0 with tag = rank; rank 0
!     receives from MPI_ANY_SOURCE and checks the status fields.
      IF (RANK .NE. 0) THEN
         DO I = 1, 10 + RANK
            IBUF(I) = RANK * 1000 + I
         END DO
         CALL MPI_SEND(IBUF, 10 + RANK, MPI_INTEGER, 0, RANK,
     &        MPI_COMM_WORLD, IERR)
      ELSE
         DO N = 1, NP - 1
            CALL MPI_RECV(IBUF, 100, MPI_INTEGER, MPI_ANY_SOURCE,
     &           MPI_ANY_TAG, MPI_COMM_WORLD, ST, IERR)
            PEER = ST(MPI_SOURCE)
            CALL CHECK(ST(MPI_TAG) .EQ. PEER, 'status tag')
            CALL MPI_GET_COUNT(ST, MPI_INTEGER, I, IERR)
            CALL CHECK(I .EQ. 10 + PEER, 'MPI_GET_COUNT')
            CALL CHECK(IBUF(I) .EQ. PEER * 1000 + I, 'data')
         END DO
      END IF
!     (Later messages must not meet rank 0's wildcard receives.)
      CALL MPI_BARRIER(MPI_COMM_WORLD, IERR)

!     Ring exchange with ISEND/IRECV of REAL*8 and CHARACTER, completed
!     by WAITALL with a status array, then again with STATUSES_IGNORE.
      DO I = 1, 50
         DBUF(I) = RANK + I / 4.0D0
      END DO
      WRITE (MSG, '(A,I4.4)') 'hello r', RANK
      CALL MPI_ISEND(DBUF, 25, MPI_DOUBLE_PRECISION, MOD(RANK + 1, NP),
     &     1, MPI_COMM_WORLD, REQS(1), IERR)
      CALL MPI_IRECV(DBUF(26), 25, MPI_DOUBLE_PRECISION,
     &     MOD(RANK + NP - 1, NP), 1, MPI_COMM_WORLD, REQS(2), IERR)
      CALL MPI_ISEND(MSG, 12, MPI_CHARACTER, MOD(RANK + 1, NP), 2,
     &     MPI_COMM_WORLD, REQS(3), IERR)
      CALL MPI_WAITALL(3, REQS, STS, IERR)
      CALL CHECK(IERR .EQ. MPI_SUCCESS, 'MPI_WAITALL')
      CALL CHECK(STS(MPI_SOURCE, 2) .EQ. MOD(RANK + NP - 1, NP),
     &     'waitall status source')
      CALL CHECK(REQS(1) .EQ. MPI_REQUEST_NULL, 'request freed')
      CALL CHECK(DBUF(26) .EQ. MOD(RANK + NP - 1, NP) + 0.25D0,
     &     'ring REAL*8')
      MSG = ' '
      CALL MPI_IRECV(MSG, 12, MPI_CHARACTER, MPI_ANY_SOURCE, 2,
     &     MPI_COMM_WORLD, REQS(4), IERR)
      CALL MPI_WAITALL(1, REQS(4), MPI_STATUSES_IGNORE, IERR)
      WRITE (ESTR, '(A,I4.4)') 'hello r', MOD(RANK + NP - 1, NP)
      CALL CHECK(MSG .EQ. ESTR(1:12), 'CHARACTER buffer')

!     SENDRECV with MPI_STATUS_IGNORE, PROBE then RECV.
      CALL MPI_SENDRECV(RANK, 1, MPI_INTEGER, MOD(RANK + 1, NP), 5,
     &     N, 1, MPI_INTEGER, MOD(RANK + NP - 1, NP), 5,
     &     MPI_COMM_WORLD, MPI_STATUS_IGNORE, IERR)
      CALL CHECK(N .EQ. MOD(RANK + NP - 1, NP), 'MPI_SENDRECV')
      CALL MPI_SEND(IBUF, 7, MPI_INTEGER, MOD(RANK + 1, NP), 6,
     &     MPI_COMM_WORLD, IERR)
      CALL MPI_PROBE(MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, ST, IERR)
      CALL MPI_GET_COUNT(ST, MPI_INTEGER, N, IERR)
      CALL CHECK(N .EQ. 7, 'MPI_PROBE count')
      CALL MPI_RECV(IBUF, N, MPI_INTEGER, ST(MPI_SOURCE), 6,
     &     MPI_COMM_WORLD, ST, IERR)
      CALL MPI_IPROBE(MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, FLAG, ST, IERR)
      CALL CHECK(.NOT. FLAG, 'MPI_IPROBE flag')

!     Errors come back through IERROR once MPI_ERRORS_RETURN is set.
      CALL MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN,
     &     IERR)
      CALL MPI_SEND(IBUF, 1, MPI_INTEGER, NP + 3, 0, MPI_COMM_WORLD,
     &     IBAD)
      CALL CHECK(IBAD .NE. MPI_SUCCESS, 'bad rank refused')
      CALL MPI_ERROR_CLASS(IBAD, CLS, IERR)
      CALL CHECK(CLS .EQ. MPI_ERR_RANK, 'MPI_ERR_RANK')
      CALL MPI_ERROR_STRING(IBAD, ESTR, LEN, IERR)
      CALL CHECK(LEN .GT. 0 .AND. ESTR(LEN+1:) .EQ. ' ',
     &     'MPI_ERROR_STRING blank-padded')
      CALL MPI_SEND(IBUF, -1, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, IBAD)
      CALL MPI_ERROR_CLASS(IBAD, CLS, IERR)
      CALL CHECK(CLS .EQ. MPI_ERR_COUNT, 'MPI_ERR_COUNT')
      CALL MPI_SEND(IBUF, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD,
     &     IBAD)
      CALL MPI_ERROR_CLASS(IBAD, CLS, IERR)
      CALL CHECK(CLS .EQ. MPI_ERR_TYPE, 'MPI_ERR_TYPE')
      CALL MPI_COMM_SIZE(MPI_COMM_NULL, N, IBAD)
      CALL MPI_ERROR_CLASS(IBAD, CLS, IERR)
      CALL CHECK(CLS .EQ. MPI_ERR_COMM, 'MPI_ERR_COMM')

      CALL MPI_ALLREDUCE(MPI_IN_PLACE, NFAIL, 1, MPI_INTEGER, MPI_SUM,
     &     MPI_COMM_WORLD, IERR)
      IF (RANK .EQ. 0 .AND. NFAIL .EQ. 0) THEN
         WRITE (*, '(A,I0,A)') 'f77_p2p: OK (', NP, ' ranks)'
      END IF
      CALL MPI_FINALIZE(IERR)
      IF (NFAIL .NE. 0) STOP 1
      END

      SUBROUTINE CHECK(OK, WHAT)
      LOGICAL OK
      CHARACTER*(*) WHAT
      INTEGER NFAIL
      COMMON /FAILS/ NFAIL
      IF (.NOT. OK) THEN
         WRITE (*, '(A,A)') 'FAIL: ', WHAT
         NFAIL = NFAIL + 1
      END IF
      END
