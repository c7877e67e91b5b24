// Built against the installed vkgemm (CMake package or pkg-config): one BLAS call checked against the
// reference, under validation, with the Vulkan loader's own vkEnumerateInstanceVersion called directly
// before and after (an application linking libvulkan must keep its functions).
#include <cstdio>
#include <vector>

#include <vulkan/vulkan.h>  // with prototypes: this program links the loader

#include "vkgemm/vkgemm.hpp"
#include "vkgemm/vulkan.hpp"

int main() {
  uint32_t before = 0, after = 0;
  if (vkEnumerateInstanceVersion(&before) != VK_SUCCESS) return 2;
  uint64_t messages = 0;
  int code = 0;
  try {
    vkgemm::Engine engine({.validation = true, .on_validation_message = [&](std::string_view m) {
                             ++messages;
                             std::fprintf(stderr, "%.*s\n", static_cast<int>(m.size()), m.data());
                           }});
    vkgemm::GemmDesc d{.layout = vkgemm::Layout::col_major, .op_b = vkgemm::Op::t, .m = 9, .n = 11, .k = 5,
                       .alpha = 2.0, .beta = -1.0, .batch = 2};
    std::vector<float> a(vkgemm::operand_extent(d, 'A').elements), b(vkgemm::operand_extent(d, 'B').elements),
        c0(vkgemm::operand_extent(d, 'C').elements);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) - 3.0f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) * 0.5f;
    for (size_t i = 0; i < c0.size(); ++i) c0[i] = static_cast<float>(i % 3);
    std::vector<float> c = c0;
    engine.gemm(d, a.data(), b.data(), c.data());
    const auto cmp = vkgemm::compare_with_reference(d, a.data(), b.data(), c0.data(), c.data());
    std::printf("vkgemm %s on %s: %s\n", vkgemm::version, engine.device().name.c_str(), cmp.summary().c_str());
    if (!cmp.passed) code = 1;
  } catch (const vkgemm::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  if (vkEnumerateInstanceVersion(&after) != VK_SUCCESS || after != before) return 2;
  std::printf("loader's vkEnumerateInstanceVersion still works: %u.%u\n", VK_API_VERSION_MAJOR(after),
              VK_API_VERSION_MINOR(after));
  return messages ? 3 : code;
}
