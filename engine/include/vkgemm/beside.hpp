// Products beside writes: a product on the engine's buffers submitted without waiting, and host memory written
// into other buffers on the device's copy queue while it runs. A loop that writes its next operand while the
// current product runs (a stream of K blocks, as vkgemm's PDGEMM's) then pays about the larger of the two a
// step, not their sum. The rules (docs/library.md, "Products beside writes"):
// - write_beside first waits, on the host, for the products submit_beside left in flight that use its buffer
//   (what they read or write must not change under them), then copies through the staging ring on the upload
//   copy queue (the compute queue where the device has none); it returns once `data` was read, its last
//   copies perhaps still running. Where the buffer is host-mapped (an integrated GPU, lavapipe) it is the
//   host's memcpy, complete on return.
// - The engine's next submission to its compute queue (a product, or a copy of write and read) waits for those
//   copies on the device (a timeline semaphore), so a product submitted after a write reads what it wrote
//   without the host waiting for it. The wait is on a value already submitted: it ends.
// - The engine's other calls (write, read, fill, gemm, Buffer's destruction) do not wait for what is in flight
//   here: wait_beside(engine, 0, ...) first wherever they touch its buffers (the C ABI does so itself).
// Every function holds the engine's lock, as Engine's members.
#pragma once

#include <chrono>
#include <cstdint>

#include "vkgemm/engine.hpp"
#include "vkgemm/plan.hpp"

namespace vkgemm {

// Engine::gemm on device buffers (desc, a, b, c, options, the epilogue's bias), checked as it is, submitted
// and not waited for. An empty product (m, n or batch 0) returns an invalid submission (nothing runs); one
// that GemmOptions::max_k_per_submission cuts into submissions is refused (Error invalid_argument): each of
// those is waited for.
GemmSubmission submit_beside(Engine& engine, const GemmDesc& desc, const BufferOffset& a, const BufferOffset& b,
                             const BufferOffset& c, const GemmOptions& options = {}, const BufferOffset& bias = {});

// Engine::write beside the products in flight (the rules above). The range is checked as write's.
void write_beside(Engine& engine, Buffer& buffer, uint64_t offset, const void* data, uint64_t bytes);

// Whether the product of submission value `product` (GemmSubmission::value() of submit_beside's), or, for 0,
// everything in flight here (products and writes), completed within `timeout` (0: a look, without waiting).
// A value the engine never gave is refused; a device lost throws.
bool wait_beside(Engine& engine, uint64_t product, std::chrono::nanoseconds timeout);

}  // namespace vkgemm
