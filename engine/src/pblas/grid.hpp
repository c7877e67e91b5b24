// The process grid of a BLACS context, found through the BLACS the program itself loaded (ScaLAPACK's C
// interface, looked up at run time: this library links MPI, not ScaLAPACK), and the MPI handles the gathers
// use, one owner type each.
#pragma once

#include "pblas/mpi.hpp"

#include <optional>
#include <string>
#include <vector>

namespace vkgemm::pblas {

// An MPI communicator this library created, freed with it (not after MPI_Finalize).
class Communicator {
 public:
  Communicator() = default;
  explicit Communicator(MPI_Comm comm) noexcept : comm_(comm) {}
  Communicator(Communicator&& other) noexcept : comm_(other.comm_) { other.comm_ = MPI_COMM_NULL; }
  Communicator& operator=(Communicator&&) = delete;
  Communicator(const Communicator&) = delete;
  ~Communicator();
  MPI_Comm get() const noexcept { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

// A committed MPI datatype, freed with it.
class Datatype {
 public:
  explicit Datatype(MPI_Datatype type) noexcept : type_(type) {}
  Datatype(Datatype&& other) noexcept : type_(other.type_) { other.type_ = MPI_DATATYPE_NULL; }
  Datatype& operator=(Datatype&&) = delete;
  Datatype(const Datatype&) = delete;
  ~Datatype();
  MPI_Datatype get() const noexcept { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

// The grid of a context as BLACS reports it, for this process.
struct GridShape {
  int rows = 0, cols = 0, my_row = -1, my_col = -1;
};

// The grid's shape, or nothing with the reason: the program has no BLACS C interface (Cblacs_gridinfo,
// Cblacs_get, Cblacs2sys_handle), or this process is not in the context's grid.
std::optional<GridShape> grid_shape(int context, std::string& reason);

// A private duplicate of the context's communicator (the gathers' messages never meet BLACS's own), and the
// rank in it of each grid position (row-major). Collective over the grid's processes.
struct GridComm {
  Communicator comm;
  std::vector<int> rank_of;  // rank_of[row * cols + col]
  int rank(int row, int col, int cols) const { return rank_of[static_cast<size_t>(row * cols + col)]; }
  // Whether every grid position has exactly one process (the same answer on every process).
  bool complete() const;
};
GridComm grid_comm(int context, const GridShape& shape);

}  // namespace vkgemm::pblas
