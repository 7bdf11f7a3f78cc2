! SPDX-License-Identifier: MIT
! Free form with "use mpi": a distributed-graph ring made with
! MPI_UNWEIGHTED (the common block must reach C as MPI_UNWEIGHTED: the
! LOGICAL weighted flag comes back false) and with weights, a graph
! topology, and MPI_Neighbor_alltoall on the ring.
program f90_topo
  use mpi
  implicit none
  integer :: ierr, rank, size, comm, gcomm, indeg, outdeg, kind, nfail
  integer :: srcs(1), dsts(1), sw(1), dw(1), sbuf(1), rbuf(1)
  integer :: index(2), edges(2), nn, ne
  logical :: weighted

  nfail = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  srcs(1) = mod(rank - 1 + size, size)
  dsts(1) = mod(rank + 1, size)

  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, srcs, MPI_UNWEIGHTED, &
       1, dsts, MPI_UNWEIGHTED, MPI_INFO_NULL, .false., comm, ierr)
  call MPI_Topo_test(comm, kind, ierr)
  if (kind /= MPI_DIST_GRAPH) nfail = nfail + 1
  call MPI_Dist_graph_neighbors_count(comm, indeg, outdeg, weighted, ierr)
  if (indeg /= 1 .or. outdeg /= 1 .or. weighted) then
    write (*, '(a)') 'FAIL: unweighted ring counts'
    nfail = nfail + 1
  end if
  sbuf(1) = 100 + rank
  rbuf(1) = -1
  call MPI_Neighbor_alltoall(sbuf, 1, MPI_INTEGER, rbuf, 1, MPI_INTEGER, &
       comm, ierr)
  if (rbuf(1) /= 100 + srcs(1)) then
    write (*, '(a,i0)') 'FAIL: neighbor_alltoall got ', rbuf(1)
    nfail = nfail + 1
  end if
  call MPI_Comm_free(comm, ierr)

  sw(1) = 7
  dw(1) = 9
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, srcs, sw, 1, dsts, &
       dw, MPI_INFO_NULL, .true., comm, ierr)
  call MPI_Dist_graph_neighbors_count(comm, indeg, outdeg, weighted, ierr)
  if (.not. weighted) then
    write (*, '(a)') 'FAIL: weighted ring reported unweighted'
    nfail = nfail + 1
  end if
  sw(1) = 0
  dw(1) = 0
  call MPI_Dist_graph_neighbors(comm, 1, srcs, sw, 1, dsts, dw, ierr)
  if (sw(1) /= 7 .or. dw(1) /= 9) then
    write (*, '(a)') 'FAIL: weights'
    nfail = nfail + 1
  end if
  call MPI_Comm_free(comm, ierr)

  ! Two nodes joined both ways.
  index = (/1, 2/)
  edges = (/1, 0/)
  call MPI_Graph_create(MPI_COMM_WORLD, 2, index, edges, .false., gcomm, ierr)
  if (rank < 2) then
    call MPI_Graphdims_get(gcomm, nn, ne, ierr)
    if (nn /= 2 .or. ne /= 2) then
      write (*, '(a)') 'FAIL: graphdims'
      nfail = nfail + 1
    end if
    call MPI_Comm_free(gcomm, ierr)
  else if (gcomm /= MPI_COMM_NULL) then
    write (*, '(a)') 'FAIL: rank outside the graph got a communicator'
    nfail = nfail + 1
  end if

  call MPI_Allreduce(MPI_IN_PLACE, nfail, 1, MPI_INTEGER, MPI_SUM, &
       MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. nfail == 0) write (*, '(a,i0,a)') 'f90_topo: OK (', size, ' ranks)'
  call MPI_Finalize(ierr)
end program f90_topo
