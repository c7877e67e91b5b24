// vkgemm bench: the ceiling each case's efficiency is measured against. --peak-gflops (f32 only) when given;
// else the device's own ceilings, measured by vkgemm peak (vkgemm/peak.hpp) before the sweep.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "vkgemm/blas.hpp"

#include "bench_result.hpp"
#include "vkgemm/peak.hpp"

namespace vkgemm::cli::bench {

// The measured rows, and the emulated rows derived from them, as ceilings in GFLOP/s (or GOP/s for the integer
// rows; rows without a value, and copy bandwidth, left out).
std::vector<Ceiling> ceilings_from(const std::vector<PeakMeasurement>& rows);

// The ceiling of a case of input `type` that ran on `kernel` with fp16 sums or not:
//   f32: --peak-gflops where given, else f32 FMA;
//   f16 on the cooperative-matrix kernels: the fastest measured subgroup MMA shape with C of the
//     accumulator's type (f16*f16+f32 for fp32 sums, f16*f16+f16 for fp16 sums). Not coopmat2's
//     workgroup-scope rows: one is the MMA alone, the other the MMA as loads into workgroup-scope matrices
//     feed it, and the kernels are compared against one ceiling, the instruction's (docs/cli.md, vkgemm peak);
//   f16 on the others: the FMA of the accumulator's type (f32 FMA for fp32 sums; f16 FMA (packed) for fp16);
//   f64: f64 FMA (where the device has shaderFloat64);
//   i8 and u8 on the cooperative-matrix kernels: the fastest measured subgroup MMA shape of their types
//     (i8*i8+i32, u8*u8+u32); on the others, none;
//   bf16 on the cooperative-matrix kernels: the fastest measured bf16*bf16+f32 shape; on the others (bf16
//     widened to f32 in the shader, f32 sums), f32 FMA;
//   f64 and f32 on the ozaki kernel: their emulated row (the int8 matrix rate over the default moduli's
//     products), scaled to `moduli` products where the call asked for other moduli (0: the default);
//   i32: none.
std::optional<Ceiling> ceiling_for(const Settings& settings, DataType type, Kernel kernel, bool f16_accumulate,
                                   uint32_t moduli = 0);

// The bytes a product moves at the least: A and B read once, C written once and, where beta != 0, read once
// (each operand once per batch entry, once in all where its stride is 0).
double bytes_moved(const GemmDesc& desc);
// The copy row's rate in GB/s, where it was measured.
std::optional<double> copy_rate(const std::vector<PeakMeasurement>& rows);
// The roofline of a product of `operations` (2 m n k batch) moving `bytes`: none without a copy rate; the
// memory's ceiling alone where the type has no compute ceiling.
std::optional<Roofline> roofline_for(const std::optional<Ceiling>& compute, std::optional<double> copy_gbps,
                                     double operations, double bytes);

}  // namespace vkgemm::cli::bench
