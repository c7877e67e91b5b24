// The experiment knobs of the performance work (docs/gpu.md): environment variables that override a
// kernel's configuration or its SPIR-V, so that a variant can be timed without a rebuild. They are not an
// interface: only a developer build reads them (the CMake option VKGEMM_EXPERIMENTS, `cmake --preset dev`);
// in any other build every function here returns "no override". This file and experiments.cpp are the
// only places that know them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace vkgemm::kernels {

// VKGEMM_EXPERIMENT_COOPMAT = "bm=128,bn=128,bk=32,wm=64,wn=32,unroll=4,buffers=2,sg=32,shape=16x16x16,group=8"
// overrides the KHR kernel's workgroup tile, warp tile, K step, fast-loop unrolling, shared-memory buffers,
// subgroup size, fragment shape and grouped block order; each key is optional (0: derived); whole=0 keeps
// every product off the pipeline with the fast path alone. The KHR
// configuration checks the result (a tile that does not divide, a shape the device does not list, a subgroup
// size it cannot give, shared memory or invocations past its limits are refused with the key named; so are
// a key the knob does not know and a value that is not a number or MxNxK).
struct KhrExperiment {
  uint32_t bm = 0, bn = 0, bk = 0, wm = 0, wn = 0;
  uint32_t unroll = 0, buffers = 0, sg = 0, group = 0;
  uint32_t tm = 0, tn = 0, tk = 0;
  std::optional<uint32_t> whole;  // 0: never the pipeline with the fast path alone (WHOLE)
};

// VKGEMM_EXPERIMENT_COOPMAT2 = "bm=128,bn=256,bk=32,inv=256,prefetch=1,unroll=8,splits=2,group=8" overrides
// the coopmat2 kernel's workgroup tile (rows, columns, K step, invocations), its software pipelining, the
// unrolling of its fast loop, its split-K and its grouped block order; each key is optional. A key it does
// not know, a value that is not a number or one outside its key's range (experiments.cpp) is refused with
// an error; values in range are not checked against the device's shapes: a bad one fails at pipeline
// creation, and a tile vkgemm does not use must be verified.
struct Coopmat2Experiment {
  uint32_t bm = 0, bn = 0, bk = 0, invocations = 0;  // 0: the tile's own
  std::optional<uint32_t> prefetch;                  // unset: the tile's own
  uint32_t unroll = 0;                               // 0: the tile's own
  uint32_t splits = 0;                               // 0: coopmat2_splits decides
  uint32_t group = 0;                                // 0: the tile's own
};

// Each read once per process (planning runs on every call).
const KhrExperiment& khr_experiment();
const Coopmat2Experiment& coopmat2_experiment();
// VKGEMM_EXPERIMENT_OZAKI_DROP = "ozaki_split,coopmat2": the emulated product's passes whose shader name starts
// with one of these are left out of its sequence (its result is then wrong): the time of each pass by
// subtraction. True when `shader` is to be left out.
bool ozaki_drop_experiment(const std::string& shader);
// VKGEMM_EXPERIMENT_SPIRV=<folder>: the pipelines take <folder>/<shader>.spv, where there is one, in place of
// the embedded variant of that name (kernels/spirv.cpp); nullptr when unset.
const char* spirv_experiment_folder();
// VKGEMM_EXPERIMENT_IR=<folder>: where the device reports pipeline statistics, pipelines are built to capture
// the driver's internal representations too, and each statistics query (`vkgemm run --stats`) writes every
// representation of every executable to <folder>/<shader>.<pass>.<executable>.<index>.<name>.txt (or .bin where the
// driver says it is not text); the folder must exist. nullptr when unset.
const char* ir_experiment_folder();

}  // namespace vkgemm::kernels
