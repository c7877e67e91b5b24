// NumPy .npy files: 2-D (a matrix) or 3-D (a batch of matrices, batch x rows x cols), C order, little-endian
// float32, float64, int32, float16, bfloat16 (as ml_dtypes saves it: descr '<V2'), int8 or uint8 (versions 1.0,
// 2.0, 3.0).
// Every malformed or unsupported file is a vkgemm::Error(file_format) that names the problem.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vkgemm/types.hpp"

namespace vkgemm::npy {

struct Array {
  DataType type = DataType::f32;
  uint32_t batch = 1;     // the first dimension of a 3-D array; 1 for a 2-D one
  bool batched = false;   // the file was 3-D
  uint32_t rows = 0;
  uint32_t cols = 0;
  std::vector<std::byte> data;  // batch * rows * cols elements, each matrix row-major, one after another
};

// Parses the bytes of a whole .npy file; `name` labels the errors.
Array parse(std::span<const std::byte> file, const std::string& name);
// Reads and parses a file: a regular file only (io_error otherwise, or when it cannot be read), its header
// checked against the file's size before the data is allocated.
Array read(const std::string& path);
// Writes a 2-D array through files::write_atomically (vkgemm/files.hpp): whole or not at all.
void write(const std::string& path, DataType type, uint32_t rows, uint32_t cols, const void* data);
// Writes a 3-D array (batch x rows x cols), the same way.
void write(const std::string& path, DataType type, uint32_t batch, uint32_t rows, uint32_t cols, const void* data);

}  // namespace vkgemm::npy
