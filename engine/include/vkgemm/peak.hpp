// The device's measured ceilings, in the manner of clpeak and vkpeak: FMA throughput in f32 and in packed
// f16, the MMA throughput of each subgroup-scope cooperative-matrix shape the device lists, and device-memory
// copy bandwidth. Each is one synthetic kernel (shaders/peak_*.comp) whose work is counted exactly, grown
// until one dispatch lasts PeakOptions::target_ms, run warm, and timed with GPU timestamps. Besides them, the
// emulated f64 and f32 rows (the ozaki kernel) are derived, not timed: the int8 matrix-unit row's rate over
// the int8 products one emulated product takes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vkgemm/engine.hpp"

namespace vkgemm {

struct PeakOptions {
  uint32_t repeat = 7;     // timed dispatches per measurement; the value is their median
  double target_ms = 0.0;  // grow the work until one dispatch lasts this long; 0: 10 ms on a GPU, 20 on a CPU
  double warm_ms = -1.0;   // run this long before timing (an idle GPU clocks down); < 0: 200 ms on a GPU, 0 on a CPU
};

struct PeakMeasurement {
  std::string name;     // "f32 FMA", "f16 FMA (packed)", "f64 FMA", "coopmat 16x16x16 f16*f16+f32", "copy", ...
  std::string unit;     // "TFLOP/s", "TOP/s" (the integer rows) or "GB/s"
  std::string inputs;   // the MMA rows' A and B type ("f16", "bf16", "i8", "u8"); empty for the others
  bool measured = false;  // timed; a derived row is not (derived_from), though it has a value
  std::string derived_from;  // derived rows: the measured row whose value this one follows from
  uint32_t products = 0;     // derived emulation rows: int8 products per emulated product (the moduli)
  std::string reason;   // when not measured: why ("not available: ...", "not measured: ...")
  double value = 0.0;   // the median over the timed dispatches, in `unit`
  double median_ms = 0.0;         // GPU time of one dispatch, median (the host-copy rows: a call's wall time)
  std::vector<double> gpu_ms;     // every timed dispatch
  double work = 0.0;    // FLOPs (integer operations) or bytes (read + written) of one dispatch
  uint32_t iterations = 0;  // the shader's loop count, as calibrated (copy: 0, it has no loop)
  std::string detail;   // workgroups, iterations, bytes
};

// Every measurement, in a fixed order: f32 FMA, f16 FMA (packed), f64 FMA, int8 dot product (packed), one row
// per cooperative-matrix shape (KHR, subgroup scope: f16, bf16, i8 and u8 measured, others saying why),
// coopmat2's workgroup-scope MMA on its kernel's large tiles (fp32 and fp16 sums; one "coopmat2" row saying
// why where the device has no VK_NV_cooperative_matrix2), copy, cache read, then the host's copies across the
// bus: "host upload (staged)", "host download (staged)", "host upload (imported)", "host download (imported)"
// (GB/s of pageable host memory, timed on the host's clock: median_ms is a call's wall time, gpu_ms empty;
// docs/design/host-copies.md). A row the device cannot run says why instead of failing; throws
// vkgemm::Error only for bad options.
// The emulated rows among them, after f64 FMA, sit beside the f32 and f64 FMA rows.
std::vector<PeakMeasurement> measure_peaks(Engine& engine, const PeakOptions& options = {});

// The emulated f64 and f32 rows ("f64 emulated (ozaki)", "f32 emulated (ozaki)"; docs/design/ozaki.md): not
// timed, derived from `rows`' fastest measured int8 matrix-unit row (inputs "i8": coopmat or coopmat2,
// i8*i8+i32) divided by the int8 products the default moduli take (f64 14, f32 7; the span guard's magnitude
// product, which runs only where the lines' levels do not decide, not counted: a ceiling no input passes), in
// TFLOP/s of the emulated type (both count 2 operations a multiply-add). Where the device
// cannot run the emulation (no shaderFloat64 or storageBuffer8BitAccess) or no int8 matrix row was measured
// (no int8 matrix units), each row has no value and says why.
std::vector<PeakMeasurement> emulation_rows(const DeviceInfo& info, const std::vector<PeakMeasurement>& rows);

}  // namespace vkgemm
