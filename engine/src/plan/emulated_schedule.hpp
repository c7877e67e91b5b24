// The emulated product's schedule (Kernel::ozaki, docs/design/ozaki.md): one admitted f64 or f32 call turned
// into a sequence of passes (plan/schedule.hpp's SequencePass), recorded into one command buffer:
//
//   arm (clear)   the coverage flag := 0
//   split A       each row of op(A): its exponent, N int8 residue planes, the magnitude plane and the line's
//                 statistics (scaled 1-norm, inexact or not) (shaders/ozaki_split.comp)
//   split B       each column of op(B): likewise, planes stored N x K (the int8 product reads op(B) = W^T)
//   magnitudes    per K chunk, one strided batch of the magnitude planes' int8 products (batch entries)
//   guard         the span guard (shaders/ozaki_guard.comp, ozaki/guard.hpp): sets the flag where some
//                 element's truncation bound passes its allowance
//   arm (each)    the native kernel's dispatches armed: their grids where the flag is set, else empty
//   products      per K chunk (at most ozaki::kChunkK), one strided batch of N x batch int8 products through
//                 the engine's own planner (auto: coopmat2, coopmat, or tiled's packed dot products), each
//                 dispatch indirect, armed before it to run only where the flag is clear
//   merge         the int32 planes -> CRT -> scaled back -> alpha, beta -> C (shaders/ozaki_merge.comp);
//                 nothing written when the flag is set
//   native        the native kernel's plan of the same call (its pieces), dispatched indirectly: it runs
//                 only when some input is NaN, infinite or a subnormal that matters, or the guard refused
//
// The workspace holds, each region 256-byte aligned: the control words (flag, indirect commands, exponents,
// line statistics), A's planes, B's planes, the magnitude products, the int32 planes, and the native plan's
// own workspace.
#pragma once

#include "plan/schedule.hpp"

namespace vkgemm::detail {

// The schedule of `desc` with options.kernel = Kernel::ozaki (checked at the door). alpha = 0, k = 0 or an
// empty product: the native plan alone (nothing to emulate). Throws vkgemm::Error(too_large) naming the
// limit where the native plan is cut into pieces or the workspace leaves the device's binding range.
Schedule schedule_emulated(const GemmDesc& desc, const GemmOptions& options, const DeviceInfo& device,
                           const tuning::Table& tuning, const Placement& placement);

}  // namespace vkgemm::detail
