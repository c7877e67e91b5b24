// Which device an engine takes (engine/src/device/device_choice.hpp): the rule as a pure function of a device
// list and the environment's values, on lists made up here (two GPUs of one type beside others, devices
// without a compute queue), with hostile values of the launchers' variables; then through the Engine, the
// variables set in this process, on the devices there are.
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "device/device_choice.hpp"
#include "support.hpp"
#include "vkgemm/vkgemm.hpp"

namespace vkgemm {
namespace {

using detail::choose_device;
using detail::DeviceRequest;
using test::expect_error;

DeviceInfo device(uint32_t index, DeviceType type, std::string name, bool compute = true) {
  DeviceInfo d;
  d.index = index;
  d.type = type;
  d.name = std::move(name);
  d.has_compute_queue = compute;
  return d;
}

// A node as a user has one: a CPU device listed first (lavapipe), two GPUs of one type, an integrated GPU
// between them, and a GPU the driver lists without a compute queue.
std::vector<DeviceInfo> node() {
  return {device(0, DeviceType::cpu, "llvmpipe"), device(1, DeviceType::discrete_gpu, "GPU A"),
          device(2, DeviceType::integrated_gpu, "iGPU"), device(3, DeviceType::discrete_gpu, "GPU B"),
          device(4, DeviceType::discrete_gpu, "GPU C, no compute", false)};
}

DeviceRequest launcher(std::vector<std::pair<std::string, std::string>> variables) {
  DeviceRequest r;
  r.launcher = std::move(variables);
  return r;
}

// Sets an environment variable for its lifetime (unsets it for nullopt), restoring what was there.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedVariable() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedVariable(const ScopedVariable&) = delete;
  ScopedVariable& operator=(const ScopedVariable&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// Every launcher variable and VKGEMM_DEVICE unset for the scope (the test may run under mpirun or Slurm).
struct CleanLauncher {
  ScopedVariable device{"VKGEMM_DEVICE", std::nullopt};
  std::vector<std::unique_ptr<ScopedVariable>> vars;
  CleanLauncher() {
    for (const auto& v : detail::kLocalRankVariables) {
      vars.push_back(std::make_unique<ScopedVariable>(v.rank, std::nullopt));
      vars.push_back(std::make_unique<ScopedVariable>(v.size, std::nullopt));
    }
  }
};

}  // namespace

TEST_SUITE("device choice") {
  TEST_CASE("without a launcher: the first device of the best type with a compute queue") {
    const DeviceChoice c = choose_device(node(), {});
    CHECK(c.index == 1);
    CHECK(c.reason.find("the best device") != std::string::npos);
    CHECK(c.reason.find("discrete GPU of 2 ([1] [3])") != std::string::npos);
    // Without GPUs: the CPU device; a best-typed device without a compute queue is passed over.
    CHECK(choose_device({device(0, DeviceType::cpu, "llvmpipe")}, {}).index == 0);
    CHECK(choose_device({device(0, DeviceType::discrete_gpu, "no queue", false), device(1, DeviceType::cpu, "cpu")}, {})
              .index == 1);
  }

  TEST_CASE("each local rank takes (rank mod count) of the best type's devices, in the loader's order") {
    // Four Open MPI ranks on the node's two compute GPUs: 0 and 2 on [1], 1 and 3 on [3]; the CPU device,
    // the integrated GPU and the GPU without a compute queue never.
    const uint32_t expected[] = {1, 3, 1, 3};
    for (uint32_t rank = 0; rank < 4; ++rank) {
      CAPTURE(rank);
      const DeviceChoice c = choose_device(
          node(), launcher({{"OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(rank)}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}}));
      CHECK(c.index == expected[rank]);
      CHECK(c.reason.find("local rank " + std::to_string(rank) + " of 4 (Open MPI: OMPI_COMM_WORLD_LOCAL_RANK, "
                          "OMPI_COMM_WORLD_LOCAL_SIZE) mod the 2 discrete GPU devices [1] [3]") != std::string::npos);
      CHECK(c.reason.find("4 local ranks share 2 devices") != std::string::npos);
    }
    // Two ranks on two GPUs: one each, and nothing said of sharing.
    const DeviceChoice one = choose_device(
        node(), launcher({{"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}));
    CHECK(one.index == 3);
    CHECK(one.reason.find("share") == std::string::npos);
    // Eight GPUs, eight ranks: rank r takes GPU r.
    std::vector<DeviceInfo> eight;
    for (uint32_t i = 0; i < 8; ++i) eight.push_back(device(i, DeviceType::discrete_gpu, "H200"));
    for (uint32_t rank = 0; rank < 8; ++rank) {
      CHECK(choose_device(eight, launcher({{"MPI_LOCALRANKID", std::to_string(rank)}, {"MPI_LOCALNRANKS", "8"}})).index ==
            rank);
    }
    // One device of the best type (a launcher that shows each rank only its own GPU): every rank takes it.
    const std::vector<DeviceInfo> own = {device(0, DeviceType::cpu, "llvmpipe"), device(1, DeviceType::discrete_gpu, "GPU")};
    CHECK(choose_device(own, launcher({{"SLURM_LOCALID", "5"}})).index == 1);
  }

  TEST_CASE("each launcher's variables; the MPI launchers' before Slurm's") {
    auto with = [](std::vector<std::pair<std::string, std::string>> v) { return choose_device(node(), launcher(v)); };
    const DeviceChoice mpich = with({{"MPI_LOCALRANKID", "1"}, {"MPI_LOCALNRANKS", "2"}});
    CHECK(mpich.index == 3);
    CHECK(mpich.reason.find("MPICH: MPI_LOCALRANKID, MPI_LOCALNRANKS") != std::string::npos);
    // Slurm, with and without the count of tasks per node (set only under --ntasks-per-node).
    const DeviceChoice slurm = with({{"SLURM_LOCALID", "3"}});
    CHECK(slurm.index == 3);
    CHECK(slurm.reason.find("local rank 3 (Slurm: SLURM_LOCALID) mod the 2") != std::string::npos);
    CHECK(with({{"SLURM_LOCALID", "2"}, {"SLURM_NTASKS_PER_NODE", "4"}}).index == 1);
    // mpirun inside a Slurm job: every rank inherits the step's SLURM_LOCALID=0; Open MPI's own decides.
    CHECK(with({{"SLURM_LOCALID", "0"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}}).index == 3);
    CHECK(with({{"SLURM_LOCALID", "0"}, {"MPI_LOCALRANKID", "1"}}).index == 3);
    // A size without its rank says nothing.
    CHECK(with({{"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}).reason.find("the best device") != std::string::npos);
    // The largest rank a C int holds is a rank.
    CHECK(with({{"SLURM_LOCALID", "2147483647"}}).index == 3);
  }

  TEST_CASE("a selector decides before the local rank") {
    DeviceRequest r = launcher({{"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}});
    r.selector = "2";
    r.selector_from = "VKGEMM_DEVICE";
    DeviceChoice c = choose_device(node(), r);
    CHECK(c.index == 2);
    CHECK(c.reason == "VKGEMM_DEVICE=2");
    r.selector = "llvm";
    r.selector_from = "";
    c = choose_device(node(), r);
    CHECK(c.index == 0);
    CHECK(c.reason == "asked for (\"llvm\")");
    r.selector = "9";
    expect_error([&] { choose_device(node(), r); }, ErrorCode::device_not_found, "out of range: there are 5 devices");
    r.selector = "no compute";
    expect_error([&] { choose_device(node(), r); }, ErrorCode::no_device, "has no compute queue");
    expect_error([] { choose_device({}, {}); }, ErrorCode::no_device, "no Vulkan device found");
    expect_error([] { choose_device({device(0, DeviceType::cpu, "x", false)}, {}); }, ErrorCode::no_device,
                 "no Vulkan device has a compute queue");
  }

  TEST_CASE("hostile launcher values are refused, naming the variable and VKGEMM_DEVICE") {
    const std::string long_value(10000, '7');
    for (const std::string& bad : std::vector<std::string>{"", "abc", "-1", "+1", " 1", "1 ", "0x1", "1e3", "1.0", "٣",
                                                           "2147483648", "4294967296", "99999999999999999999999",
                                                           long_value}) {
      CAPTURE(bad);
      expect_error([&] { choose_device(node(), launcher({{"OMPI_COMM_WORLD_LOCAL_RANK", bad}})); },
                   ErrorCode::invalid_argument, "OMPI_COMM_WORLD_LOCAL_RANK=");
      expect_error([&] { choose_device(node(), launcher({{"SLURM_LOCALID", bad}})); }, ErrorCode::invalid_argument,
                   "set VKGEMM_DEVICE to the device this process should take");
      expect_error([&] { choose_device(node(), launcher({{"MPI_LOCALRANKID", "0"}, {"MPI_LOCALNRANKS", bad}})); },
                   ErrorCode::invalid_argument, "MPI_LOCALNRANKS=");
    }
    // A value as long as that is quoted in part, its length said.
    expect_error([&] { choose_device(node(), launcher({{"SLURM_LOCALID", long_value}})); }, ErrorCode::invalid_argument,
                 "(cut; 10000 characters)");
    // A control character is escaped, not written into the message.
    expect_error([&] { choose_device(node(), launcher({{"SLURM_LOCALID", "1\n2"}})); }, ErrorCode::invalid_argument,
                 "\"1\\n2\"");
    expect_error([&] { choose_device(node(), launcher({{"MPI_LOCALRANKID", "0"}, {"MPI_LOCALNRANKS", "0"}})); },
                 ErrorCode::invalid_argument, "a whole number from 1 to 2147483647");
    // A rank not below its count.
    expect_error(
        [&] {
          choose_device(node(), launcher({{"OMPI_COMM_WORLD_LOCAL_RANK", "4"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}}));
        },
        ErrorCode::invalid_argument, "OMPI_COMM_WORLD_LOCAL_RANK=4 is not below OMPI_COMM_WORLD_LOCAL_SIZE=4");
    // A selector needs no launcher value: a hostile one is not read.
    DeviceRequest r = launcher({{"OMPI_COMM_WORLD_LOCAL_RANK", "abc"}});
    r.selector = "0";
    CHECK(choose_device(node(), r).index == 0);
  }

  TEST_CASE("the engine takes the device the rule picks, and says why") {
    CleanLauncher clean;
    const std::vector<DeviceInfo> devices = Engine::devices();
    REQUIRE(!devices.empty());
    const DeviceChoice best = Engine::choose_device();
    CHECK(best.reason.find("the best device") != std::string::npos);
    {
      // The last local rank of as many as there are devices of the best type takes the last of them.
      const DeviceChoice first = choose_device(devices, {});
      uint32_t count = 0;
      for (const auto& d : devices) count += d.has_compute_queue && d.type == devices[first.index].type;
      ScopedVariable rank("OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(2 * count - 1));
      ScopedVariable size("OMPI_COMM_WORLD_LOCAL_SIZE", std::to_string(2 * count));
      const DeviceChoice chosen = Engine::choose_device();
      CHECK(chosen.reason.find("local rank " + std::to_string(2 * count - 1)) != std::string::npos);
      auto engine = test::make_engine();
      CHECK(engine->device().index == chosen.index);
      CHECK(engine->device_reason() == chosen.reason);
      // VKGEMM_DEVICE and the option decide before it.
      ScopedVariable selected("VKGEMM_DEVICE", std::to_string(best.index));
      CHECK(Engine::choose_device().reason == "VKGEMM_DEVICE=" + std::to_string(best.index));
      CHECK(Engine::choose_device({.device = std::to_string(best.index)}).reason.find("asked for") == 0);
    }
    {
      // A hostile value refuses the engine before any device is made.
      ScopedVariable rank("MPI_LOCALRANKID", "-3");
      expect_error([] { Engine::choose_device(); }, ErrorCode::invalid_argument, "MPI_LOCALRANKID=\"-3\"");
      expect_error([] { test::make_engine(); }, ErrorCode::invalid_argument, "MPI_LOCALRANKID=\"-3\"");
      ScopedVariable selected("VKGEMM_DEVICE", std::to_string(best.index));
      CHECK(Engine::choose_device().index == best.index);
    }
  }
}

}  // namespace vkgemm
