// The public tuning API (vkgemm/tuning.hpp) over the registry's rules and the tuning table.
#include "vkgemm/tuning.hpp"

#include "engine/environment.hpp"
#include "kernels/registry.hpp"
#include "tuning/tuning_file.hpp"
#include "vkgemm/error.hpp"

namespace vkgemm {

std::vector<BlockedConfig> blocked_candidates(const Engine& engine, DataType type) {
  std::vector<BlockedConfig> out;
  const DeviceInfo& device = engine.device();
  // Small-M blocks (16 and 32 rows) only with wide ones (128 and 256 columns): for short, wide products
  // (127 x 4096 x 4096), where 64 to 128 rows of blocks leave most of a large GPU idle. Lanes 32 (a whole
  // 32-wide group along N) is the only warp layout some of them have.
  for (uint32_t bm : {16u, 32u, 64u, 128u, 256u})
    for (uint32_t bn : {64u, 128u, 256u})
      for (uint32_t bk : {8u, 16u, 32u})
        for (uint32_t tm : {4u, 8u, 16u})
          for (uint32_t tn : {4u, 8u, 16u})
            for (uint32_t lanes : {4u, 8u, 16u, 32u}) {
              const BlockedConfig c{.bm = bm, .bn = bn, .bk = bk, .tm = tm, .tn = tn, .lanes_n = lanes, .split_k = 1,
                                    .group_m = 1};
              const uint32_t threads = (bm / tm) * (bn / tn);
              if (threads < 64 || threads > 512 || tm * tn > 128) continue;
              if (bm < 64 && bn < 128) continue;
              try {
                kernels::check_blocked_config(device, type, c);
                out.push_back(c);
              } catch (const Error&) {
                // Outside the kernel's rules or this device's limits.
              }
            }
  return out;
}

std::string default_tuning_file() { return detail::environment_tuning_file(); }

std::string write_tuning_file(const DeviceInfo& device, const std::vector<TuningEntry>& entries,
                              const std::string& path) {
  std::vector<tuning::Entry> converted;
  for (const auto& e : entries) {
    converted.push_back({e.type, e.m, e.n, e.k, e.op_a == Op::t, e.op_b == Op::t, e.kernel, e.tile, e.config, e.gflops});
  }
  return tuning::merge_into_tuning_file(device, converted, path);
}

std::string write_tuning_file(const Engine& engine, const std::vector<TuningEntry>& entries, const std::string& path) {
  return write_tuning_file(engine.device(), entries, path);
}

void check_tuning_file(const std::string& path) { tuning::check_tuning_file_writable(path); }

}  // namespace vkgemm
