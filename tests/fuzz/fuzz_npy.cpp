// libFuzzer target for the .npy reader (vkgemm::npy::parse): any bytes must give an Array whose data
// matches its header, or a vkgemm::Error(file_format); never a crash, a sanitizer report or another error.
#include <cstddef>
#include <cstdint>
#include <span>

#include "npy.hpp"
#include "vkgemm/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto array = vkgemm::npy::parse(std::span(reinterpret_cast<const std::byte*>(data), size), "fuzz.npy");
    const uint64_t expected = uint64_t{array.batch} * array.rows * array.cols * vkgemm::element_size(array.type);
    if (array.data.size() != expected) __builtin_trap();  // the header and the data disagree
  } catch (const vkgemm::Error& e) {
    if (e.code() != vkgemm::ErrorCode::file_format) __builtin_trap();
  }
  return 0;
}
