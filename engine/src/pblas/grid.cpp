#include "pblas/grid.hpp"

#include <dlfcn.h>

namespace vkgemm::pblas {
namespace {

// ScaLAPACK's BLACS, C interface (its Int is int in the LP64 builds Debian and most clusters ship).
using GridInfo = void (*)(int context, int* rows, int* cols, int* my_row, int* my_col);
using Get = void (*)(int context, int what, int* value);
using ToSystem = MPI_Comm (*)(int handle);
constexpr int kContextHandle = 10;  // Cblacs_get's SGET_BLACSCONTXT: the handle of the grid's own communicator

template <class F>
F blacs(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

bool mpi_finalized() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  return finalized != 0;
}

}  // namespace

Communicator::~Communicator() {
  if (comm_ != MPI_COMM_NULL && !mpi_finalized()) MPI_Comm_free(&comm_);
}

Datatype::~Datatype() {
  if (type_ != MPI_DATATYPE_NULL && !mpi_finalized()) MPI_Type_free(&type_);
}

std::optional<GridShape> grid_shape(int context, std::string& reason) {
  const auto info = blacs<GridInfo>("Cblacs_gridinfo");
  if (!info || !blacs<Get>("Cblacs_get") || !blacs<ToSystem>("Cblacs2sys_handle")) {
    reason = "no BLACS C interface in the program";
    return std::nullopt;
  }
  GridShape shape;
  info(context, &shape.rows, &shape.cols, &shape.my_row, &shape.my_col);
  if (shape.rows < 1 || shape.cols < 1 || shape.my_row < 0 || shape.my_row >= shape.rows || shape.my_col < 0 ||
      shape.my_col >= shape.cols) {
    reason = "this process is not in the context's grid";
    return std::nullopt;
  }
  return shape;
}

GridComm grid_comm(int context, const GridShape& shape) {
  int handle = 0;
  blacs<Get>("Cblacs_get")(context, kContextHandle, &handle);
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(blacs<ToSystem>("Cblacs2sys_handle")(handle), &dup);
  GridComm grid{Communicator(dup), {}};
  int size = 0;
  MPI_Comm_size(dup, &size);
  // Each process says where it sits; BLACS's own numbering of its communicator is not assumed.
  const int mine[2] = {shape.my_row, shape.my_col};
  std::vector<int> places(2 * static_cast<size_t>(size));
  MPI_Allgather(mine, 2, MPI_INT, places.data(), 2, MPI_INT, dup);
  grid.rank_of.assign(static_cast<size_t>(shape.rows * shape.cols), -1);
  for (int r = 0; r < size; ++r) {
    const int row = places[2 * static_cast<size_t>(r)], col = places[2 * static_cast<size_t>(r) + 1];
    if (row < 0 || row >= shape.rows || col < 0 || col >= shape.cols) return grid;  // incomplete: refused
    int& slot = grid.rank_of[static_cast<size_t>(row * shape.cols + col)];
    slot = slot == -1 ? r : -2;  // -2: two processes claim one position
  }
  return grid;
}

bool GridComm::complete() const {
  for (int r : rank_of)
    if (r < 0) return false;
  return !rank_of.empty();
}

}  // namespace vkgemm::pblas
