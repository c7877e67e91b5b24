// A kernel added by the steps of docs/architecture.md, compiled (not run) with the kernel table and the
// names, so that the build shows the table takes a kernel from its shader (dummy.comp and its line in
// CMakeLists.txt), its spec file (this) and its list entry (extra_kernels.hpp) alone, its enumerator
// included. It launches as the tiled kernel does (a square workgroup; the shader's TILE constant set by name).
#include "kernels/kernel_spec.hpp"

namespace vkgemm::kernels {
namespace {

constexpr DataType kInputs[] = {DataType::f32};

std::vector<GemmOptions> candidates(const LaunchContext&, const Problem&) { return {}; }  // never auto's

}  // namespace

const KernelSpec dummy_spec{
    .kernel = Kernel::dummy,  // made by its list entry (extra_kernels.hpp), as every kernel's is
    .inputs = kInputs,
    .computes = "computes f32",
    .reads_transposed = false,
    .auto_fallback = false,
    .from_tuning = nullptr,
    .auto_candidates = candidates,
    .check = check_square,
    .launch = square_launch,
    .pin = square_pin,
};

}  // namespace vkgemm::kernels
