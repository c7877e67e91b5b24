// Determinism: the same product on the same device and build gives bitwise-identical results, run after
// run, for every kernel and type, through the host-memory call and through fresh device buffers alike.
#include <doctest/doctest.h>

#include <vector>

#include "support.hpp"

using namespace vkgemm;

TEST_SUITE("determinism") {
  TEST_CASE("every kernel and type: bitwise-identical results run after run") {
    Engine& e = test::engine();
    auto rng = test::case_rng("determinism");
    // k large enough that float sums round differently in another order; m, n off tile multiples.
    constexpr uint32_t m = 45, n = 37, k = 523;
    constexpr int kRuns = 5;
    int configurations = 0;
    std::vector<Kernel> kernels(std::begin(simt_kernels), std::end(simt_kernels));
    kernels.insert(kernels.end(), std::begin(matrix_kernels), std::end(matrix_kernels));
    for (const Kernel kernel : kernels) {
      for (const DataType type : all_data_types) {
        // C of the default type: f32 for f16 inputs. The cooperative-matrix kernels choose their own tiles.
        const DataType out = default_output_type(type);
        const bool matrix = kernel == Kernel::coopmat || kernel == Kernel::coopmat2;
        const GemmOptions options{.kernel = kernel, .tile = matrix ? 16u : 8u};
        try {
          e.check_supported(type, options);
        } catch (const Error&) {
          continue;  // this device cannot run it; the shape and error suites cover the refusal
        }
        ++configurations;
        const auto a = test::random_elements(type, size_t{m} * k, rng), b = test::random_elements(type, size_t{k} * n, rng);
        const size_t c_bytes = size_t{m} * n * element_size(out);
        std::vector<std::byte> first(c_bytes);
        e.gemm(type, m, n, k, a.data(), b.data(), first.data(), options);
        const Comparison cmp = compare_with_reference(type, m, n, k, a.data(), b.data(), first.data());
        INFO(to_string(kernel), " ", to_string(type), ": ", cmp.summary());
        REQUIRE(cmp.passed);  // identical garbage would be deterministic too
        for (int run = 1; run < kRuns; ++run) {
          std::vector<std::byte> again(c_bytes, std::byte{0x5a});
          if (run % 2) {
            e.gemm(type, m, n, k, a.data(), b.data(), again.data(), options);
          } else {  // fresh device buffers at another offset: placement must not change the bits either
            const uint64_t off = 16 * element_size(type);
            Buffer ab = e.create_buffer(off + a.size()), bb = e.create_buffer(off + b.size()),
                   cb = e.create_buffer(off + c_bytes);
            e.write(ab, off, a.data(), a.size());
            e.write(bb, off, b.data(), b.size());
            e.gemm({&ab, off, m, k, type}, {&bb, off, k, n, type}, {&cb, off, m, n, out}, options);
            e.read(cb, off, again.data(), c_bytes);
          }
          size_t differing = 0;
          for (size_t i = 0; i < c_bytes; ++i) differing += first[i] != again[i];
          INFO("run ", run, ": ", differing, " bytes differ from the first run");
          CHECK(differing == 0);
        }
      }
    }
    CHECK(configurations >= 2);
    MESSAGE(configurations, " kernel x type configurations, ", kRuns, " runs each, bitwise identical");
  }
}
