// MPI for vkgemm's PDGEMM: the program's own. The library links no MPI (the package needs none, and a program
// never gets a second one): these symbols bind to the MPI the program loaded. They are weak, so that the
// library also loads into a process without MPI (a preload that reaches every program a shell starts): there
// mpi_present() is false and every call goes to ScaLAPACK's own P?GEMM (which such a process cannot have).
#pragma once

#include <mpi.h>

// Every MPI function and predefined handle this library uses (Open MPI's handles are addresses of its
// objects; MPICH's are integers and need nothing).
#pragma weak MPI_Allgather
#pragma weak MPI_Allreduce
#pragma weak MPI_Comm_dup
#pragma weak MPI_Comm_free
#pragma weak MPI_Comm_size
#pragma weak MPI_Comm_split_type
#pragma weak MPI_Finalized
#pragma weak MPI_Initialized
#pragma weak MPI_Irecv
#pragma weak MPI_Isend
#pragma weak MPI_Type_commit
#pragma weak MPI_Type_free
#pragma weak MPI_Type_vector
#pragma weak MPI_Waitall
#pragma weak MPI_Waitany
#ifdef OPEN_MPI
#pragma weak ompi_mpi_byte
#pragma weak ompi_mpi_char
#pragma weak ompi_mpi_comm_null
#pragma weak ompi_mpi_datatype_null
#pragma weak ompi_mpi_double
#pragma weak ompi_mpi_float
#pragma weak ompi_mpi_info_null
#pragma weak ompi_mpi_int
#pragma weak ompi_mpi_op_max
#endif

namespace vkgemm::pblas {

// Whether the process has an MPI (the program's) and it is initialized.
inline bool mpi_present() {
  if (!&MPI_Initialized || !&MPI_Isend) return false;
  int initialized = 0;
  MPI_Initialized(&initialized);
  return initialized != 0;
}

}  // namespace vkgemm::pblas
