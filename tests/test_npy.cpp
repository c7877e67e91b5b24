// The .npy reader: round trips, and a specific error for every malformed or unsupported file.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include "npy.hpp"
#include "vkgemm/error.hpp"

using namespace vkgemm;

namespace {

// A .npy file with the given header dict text (padded the NumPy way) and `data_bytes` bytes of data.
std::vector<std::byte> make_file(const std::string& dict, size_t data_bytes, int major = 1) {
  std::string header = dict;
  const size_t pre = major == 1 ? 10 : 12;
  header.append((64 - (pre + header.size() + 1) % 64) % 64, ' ');
  header.push_back('\n');
  std::string out = "\x93NUMPY";
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  const size_t len = header.size();
  out.push_back(static_cast<char>(len & 0xff));
  out.push_back(static_cast<char>((len >> 8) & 0xff));
  if (major != 1) out.append(2, '\0');
  out += header;
  out.append(data_bytes, '\x01');
  std::vector<std::byte> bytes(out.size());
  std::memcpy(bytes.data(), out.data(), out.size());
  return bytes;
}

void expect_format_error(const std::vector<std::byte>& file, const std::string& words) {
  try {
    npy::parse(file, "test.npy");
    FAIL("parsed without error; expected one mentioning \"", words, "\"");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::file_format);
    CHECK_MESSAGE(std::string(e.what()).find(words) != std::string::npos, e.what());
  }
}

}  // namespace

TEST_SUITE("npy") {
  TEST_CASE("well-formed files of each dtype and version") {
    auto f = npy::parse(make_file("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }", 24), "x");
    CHECK(f.type == DataType::f32);
    CHECK(f.rows == 3);
    CHECK(f.cols == 2);
    CHECK(f.data.size() == 24);
    CHECK(npy::parse(make_file("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1), }", 8), "x").type ==
          DataType::f64);
    CHECK(npy::parse(make_file("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 0), }", 0), "x").type ==
          DataType::i32);
    CHECK(npy::parse(make_file("{\"descr\": \"<f4\", \"shape\": (1, 2), \"fortran_order\": False}", 8, 2), "x").cols ==
          2);
    const auto h = npy::parse(make_file("{'descr': '<f2', 'fortran_order': False, 'shape': (3, 5), }", 30), "x");
    CHECK(h.type == DataType::f16);
    CHECK(h.data.size() == 30);
  }

  TEST_CASE("float16 write then read gives the same bits") {
    const auto path =
        (std::filesystem::temp_directory_path() / ("vkgemm-npy16-" + std::to_string(getpid()) + ".npy")).string();
    const std::vector<uint16_t> m = {0x3c00, 0xc000, 0x7bff, 0x0001, 0x8000, 0x3555};
    npy::write(path, DataType::f16, 3, 2, m.data());
    const auto back = npy::read(path);
    std::filesystem::remove(path);
    CHECK(back.type == DataType::f16);
    CHECK(back.rows == 3);
    CHECK(back.cols == 2);
    CHECK(std::memcmp(back.data.data(), m.data(), sizeof(uint16_t) * 6) == 0);
  }

  // bfloat16 as ml_dtypes saves it: np.save writes the dtype's str, and ml_dtypes' types are of kind 'V'
  // (NumPy's character codes do not extend), so a bfloat16 array's header says '<V2'. The header below is
  // written by NumPy's documented format (ml_dtypes is not installable here); int8 and uint8 as NumPy writes
  // them ('|i1', '|u1').
  TEST_CASE("bfloat16 as ml_dtypes writes it, int8 and uint8: read, and written the same way") {
    const auto bf = npy::parse(make_file("{'descr': '<V2', 'fortran_order': False, 'shape': (2, 3), }", 12), "x");
    CHECK(bf.type == DataType::bf16);
    CHECK(bf.data.size() == 12);
    CHECK(npy::parse(make_file("{'descr': '|i1', 'fortran_order': False, 'shape': (2, 3), }", 6), "x").type ==
          DataType::i8);
    CHECK(npy::parse(make_file("{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), }", 6), "x").type ==
          DataType::u8);
    expect_format_error(make_file("{'descr': '<V4', 'fortran_order': False, 'shape': (1, 1), }", 4), "'<V2'");
    const auto path =
        (std::filesystem::temp_directory_path() / ("vkgemm-npy-narrow-" + std::to_string(getpid()) + ".npy")).string();
    const std::vector<uint16_t> m = {0x3f80, 0xc000, 0x7f7f, 0x0001, 0x8000, 0x7fc0};
    npy::write(path, DataType::bf16, 3, 2, m.data());
    std::vector<std::byte> bytes(std::filesystem::file_size(path));
    {
      std::FILE* f = std::fopen(path.c_str(), "rb");
      REQUIRE(f);
      CHECK(std::fread(bytes.data(), 1, bytes.size(), f) == bytes.size());
      std::fclose(f);
    }
    const std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    CHECK(text.find("'descr': '<V2'") != std::string::npos);
    const auto back = npy::read(path);
    CHECK(back.type == DataType::bf16);
    CHECK(std::memcmp(back.data.data(), m.data(), 12) == 0);
    const std::vector<int8_t> bytes8 = {-128, -1, 0, 1, 127, 5};
    for (const DataType t : {DataType::i8, DataType::u8}) {
      npy::write(path, t, 2, 3, bytes8.data());
      const auto b8 = npy::read(path);
      CHECK(b8.type == t);
      CHECK(std::memcmp(b8.data.data(), bytes8.data(), 6) == 0);
    }
    std::filesystem::remove(path);
  }

  TEST_CASE("write then read gives the same matrix") {
    const auto path =
        (std::filesystem::temp_directory_path() / ("vkgemm-npy-" + std::to_string(getpid()) + ".npy")).string();
    const std::vector<double> m = {1.5, -2.25, 3, 4, 5, 6};
    npy::write(path, DataType::f64, 2, 3, m.data());
    const auto back = npy::read(path);
    std::filesystem::remove(path);
    CHECK(back.type == DataType::f64);
    CHECK(back.rows == 2);
    CHECK(back.cols == 3);
    CHECK(std::memcmp(back.data.data(), m.data(), sizeof(double) * 6) == 0);
  }

  TEST_CASE("3-D arrays are batches; write then read gives them back") {
    const auto a = npy::parse(make_file("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2, 1), }", 24), "x");
    CHECK(a.batched);
    CHECK(a.batch == 3);
    CHECK(a.rows == 2);
    CHECK(a.cols == 1);
    CHECK(a.data.size() == 24);
    const auto flat = npy::parse(make_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1), }", 8), "x");
    CHECK_FALSE(flat.batched);
    CHECK(flat.batch == 1);
    const auto path =
        (std::filesystem::temp_directory_path() / ("vkgemm-npy3-" + std::to_string(getpid()) + ".npy")).string();
    const std::vector<int32_t> m = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    npy::write(path, DataType::i32, 2, 3, 2, m.data());
    const auto back = npy::read(path);
    std::filesystem::remove(path);
    CHECK(back.batched);
    CHECK(back.batch == 2);
    CHECK(back.rows == 3);
    CHECK(back.cols == 2);
    CHECK(std::memcmp(back.data.data(), m.data(), sizeof(int32_t) * 12) == 0);
  }

  TEST_CASE("each malformation has its own error") {
    const std::string ok_tail = "'fortran_order': False, 'shape': (2, 2), }";
    expect_format_error({std::byte{'P'}, std::byte{'K'}, std::byte{3}, std::byte{4}, std::byte{0}, std::byte{0},
                         std::byte{0}, std::byte{0}},
                        "bad magic");
    auto truncated_header = make_file("{'descr': '<f4', " + ok_tail, 16);
    truncated_header.resize(30);
    expect_format_error(truncated_header, "truncated header");
    expect_format_error(make_file("{'descr': '<f4', " + ok_tail, 15), "truncated data");
    expect_format_error(make_file("{'descr': '<f4', " + ok_tail, 17), "unexpected data");
    expect_format_error(make_file("{'descr': '<c8', " + ok_tail, 32), "unsupported dtype");
    expect_format_error(make_file("{'descr': '<f2', " + ok_tail, 7), "truncated");  // float16 reads; 8 bytes wanted
    expect_format_error(make_file("{'descr': '>f2', " + ok_tail, 8), "big-endian");
    expect_format_error(make_file("{'descr': '<u2', " + ok_tail, 8), "unsupported dtype");
    expect_format_error(make_file("{'descr': '>f4', " + ok_tail, 16), "big-endian");
    expect_format_error(make_file("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16), "Fortran");
    expect_format_error(make_file("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 16), "1-D");
    expect_format_error(make_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 1, 1), }", 16), "4-D");
    expect_format_error(make_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 2), }", 16),
                        "truncated data: the header describes 2x2x2");
    expect_format_error(make_file("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 2), }", 20),
                        "4 bytes of unexpected data after the 1x2x2 array");
    expect_format_error(
        make_file("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967295, 4294967295, 4294967295), }", 16),
        "over 2^64");
    expect_format_error(make_file("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967295, 4294967295), }", 16),
                        "truncated data");
    expect_format_error(make_file("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 1), }", 16),
                        "exceeds 2^32-1");
    expect_format_error(make_file("{'descr': '<f4', 'shape': (2, 2), }", 16), "lacks");
    expect_format_error(make_file("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2, 2), }", 16), "fortran_order");
    expect_format_error(make_file("{'descr': '<f4' 'fortran_order': False}", 16), "malformed header");
    auto bad_version = make_file("{'descr': '<f4', " + ok_tail, 16);
    bad_version[6] = std::byte{9};
    expect_format_error(bad_version, "version 9");
  }

  TEST_CASE("a missing file is an io_error") {
    try {
      npy::read("/nonexistent/vkgemm/a.npy");
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::io_error);
    }
  }
}
