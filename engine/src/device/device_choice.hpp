// Which device an engine takes: the one rule the library, its C ABI, the drop-in BLAS and `vkgemm devices`
// share. A pure function of the device list and of what the caller and the environment say (environment.cpp
// reads the variables), so that the tests give it any list and any values.
//
// The rule, first that applies:
//   1. a selector (EngineOptions::device, else VKGEMM_DEVICE): an index, or a case-insensitive substring of
//      the name (the first device that has it);
//   2. a launcher's local rank (this process's place among the ranks on its node, as Open MPI, MPICH's Hydra
//      or Slurm sets it): the device at (local rank mod their number) among the devices of the best type, in
//      the loader's order. One rank per GPU on a multi-GPU node, with no setting; more ranks than devices
//      share them in turn. A launcher that shows each rank only its own GPU (Slurm's --gpus-per-task with
//      device cgroups) leaves one device of the best type: every rank takes it;
//   3. the best device: the first of the best type (discrete GPU, integrated, virtual, CPU, other).
// Only devices with a compute queue count. A rank 0 takes the device rule 3 takes.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "vkgemm/device_info.hpp"
#include "vkgemm/engine.hpp"

namespace vkgemm::detail {

// One launcher's local-rank variables: this process's rank among the ranks on its node, and how many there
// are (where the launcher says: Slurm sets SLURM_NTASKS_PER_NODE only under --ntasks-per-node).
struct LocalRankVariables {
  const char* launcher;
  const char* rank;
  const char* size;
};

// In the order they are read, the first whose rank is set deciding: the MPI launchers' own before Slurm's,
// because mpirun inside a Slurm job hands every rank it starts the job step's SLURM_LOCALID (0 for all).
// Intel MPI's launcher is Hydra: it sets MPICH's.
inline constexpr LocalRankVariables kLocalRankVariables[] = {
    {"Open MPI", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"MPICH", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
    {"Slurm", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"},
};

// What decides the device besides the list.
struct DeviceRequest {
  std::string selector;       // an index or a name substring; empty: rules 2 and 3
  std::string selector_from;  // what set it, for the reason: "VKGEMM_DEVICE", or empty for the caller's option
  // The variables of kLocalRankVariables that are set and not empty: (name, value).
  std::vector<std::pair<std::string, std::string>> launcher;
};

// The device `request` picks from `devices` (in the loader's order, DeviceInfo::index their position) and
// why. Throws vkgemm::Error: no_device (no device, none with a compute queue, or the one named has none),
// device_not_found (no device the selector names), invalid_argument (a local-rank variable that is not a
// whole number from 0 to 2^31 - 1, a local size of 0, or a rank not below its size: nothing is guessed
// from a value the launcher did not mean; the sentence names the variable and VKGEMM_DEVICE, the way past it).
DeviceChoice choose_device(const std::vector<DeviceInfo>& devices, const DeviceRequest& request);

}  // namespace vkgemm::detail
