// Bad input that tests/test_errors.cpp, test_npy.cpp and test_cli.cpp do not already try: enums cast from
// integers the API does not define, foreign buffers, ranges that wrap 64 bits, and the program fed bad
// numbers, conflicting options, absurd sizes and malformed .npy files. Each must give its specific error,
// never a crash, a hang or a partial output file, and the engine must work afterwards.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include "npy.hpp"
#include "support.hpp"

using namespace vkgemm;
using vkgemm::test::expect_error;

namespace {

bool contains(const std::string& s, const std::string& words) { return s.find(words) != std::string::npos; }


std::filesystem::path scratch_dir() {
  auto dir = std::filesystem::temp_directory_path() / ("vkgemm-bad-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
}

// A .npy file: the header dict padded the NumPy way, then `data_bytes` bytes.
std::string npy_file(const std::string& dict, size_t data_bytes) {
  std::string header = dict;
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header.push_back('\n');
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + std::string(data_bytes, '\0');
}

}  // namespace

TEST_SUITE("bad_input") {
  TEST_CASE("element types and kernels outside the enums are refused, not switched on or divided by") {
    Engine& e = test::engine();
    const auto bad_type = static_cast<DataType>(7);
    const auto bad_kernel = static_cast<Kernel>(42);
    std::vector<float> a(16, 1.0f), c(16);
    expect_error([&] { e.check_supported(bad_type, {}); }, ErrorCode::unsupported_type, "element type 7");
    expect_error([&] { e.check_supported(DataType::f16, bad_type, {}); }, ErrorCode::unsupported_type, "element type 7");
    expect_error([&] { e.check_supported(DataType::f32, {.kernel = bad_kernel}); }, ErrorCode::unsupported_config,
                 "kernel 42");
    expect_error([&] { e.gemm(bad_type, 4, 4, 4, a.data(), a.data(), c.data()); }, ErrorCode::unsupported_type,
                 "element type 7");
    expect_error([&] { e.gemm(DataType::f32, 4, 4, 4, a.data(), a.data(), c.data(), {.kernel = bad_kernel}); },
                 ErrorCode::unsupported_config, "kernel 42");
    Buffer buf = e.create_buffer(256);
    // A bad type on device buffers reached `offset % element_size` (0): a division by zero.
    expect_error([&] { e.gemm({&buf, 0, 2, 2, bad_type}, {&buf, 0, 2, 2, bad_type}, {&buf, 0, 2, 2, bad_type}); },
                 ErrorCode::unsupported_type, "element type 7");
    expect_error([&] { e.check_supported(DataType::f32, {.kernel = Kernel::tiled, .tile = 1025}); }, ErrorCode::invalid_argument, "1 to 1024");
    expect_error([&] { e.gemm(DataType::f32, 4, 4, 4, a.data(), a.data(), c.data(), {.repeat = 100001}); },
                 ErrorCode::invalid_argument, "repeat");
    expect_error([&] { e.gemm(DataType::f32, 4, 4, 4, a.data(), a.data(), c.data(), {.warmup = 100001}); },
                 ErrorCode::invalid_argument, "warmup");
  }

  TEST_CASE("foreign buffers, wrapping ranges and null pointers in write and read") {
    Engine& e = test::engine();
    Buffer mine = e.create_buffer(64);
    Engine other({.validation = true});
    Buffer theirs = other.create_buffer(64);
    expect_error([&] { e.gemm({&theirs, 0, 2, 2, DataType::f32}, {&mine, 0, 2, 2, DataType::f32},
                              {&mine, 16, 2, 2, DataType::f32}); },
                 ErrorCode::invalid_argument, "another engine");
    expect_error([&] { e.write(theirs, 0, "abcd", 4); }, ErrorCode::invalid_argument, "another engine");
    char back[8];
    // offset + bytes wraps 2^64 to a small number: must still be outside.
    expect_error([&] { e.write(mine, ~uint64_t{0} - 3, "12345678", 8); }, ErrorCode::invalid_argument, "outside");
    expect_error([&] { e.read(mine, 8, back, ~uint64_t{0} - 4); }, ErrorCode::invalid_argument, "outside");
    expect_error([&] { e.write(mine, 0, nullptr, 8); }, ErrorCode::invalid_argument, "null");
    expect_error([&] { e.read(mine, 0, nullptr, 8); }, ErrorCode::invalid_argument, "null");
    // A matrix whose offset puts its end past 2^64.
    expect_error([&] { e.gemm({&mine, ~uint64_t{0} - 3, 1, 1, DataType::f32}, {&mine, 0, 1, 1, DataType::f32},
                              {&mine, 4, 1, 1, DataType::f32}); },
                 ErrorCode::buffer_too_small, "A's offset 18446744073709551612 plus the 4 bytes it spans overflows 64 bits");
    // The same wrap in write and read is named as such, not as a range ending at a small number.
    expect_error([&] { e.write(mine, ~uint64_t{0} - 3, "12345678", 8); }, ErrorCode::invalid_argument, "overflows 64 bits");
    CHECK(other.validation_message_count() == 0);
    auto rng = test::case_rng("after foreign buffers");
    const auto r = test::check_product(DataType::i32, 19, 23, 17, {.kernel = Kernel::naive, .tile = 8}, rng);
    INFO(r.detail);
    CHECK(r.passed);
  }

  TEST_CASE("the program: bad numbers, conflicting options and absurd sizes, each exit 2 with its message") {
    const auto dir = scratch_dir();
    const std::string a = (dir / "a.npy").string(), bi = (dir / "b_i32.npy").string();
    const std::vector<float> fa = {1, 2, 3, 4};
    const std::vector<int32_t> ib = {1, 2, 3, 4};
    npy::write(a, DataType::f32, 2, 2, fa.data());
    npy::write(bi, DataType::i32, 2, 2, ib.data());
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"run --m 4294967296 --n 4 --k 4", "--m must be between 0 and 2^32-1"},
        {"run --m 4 --n -1 --k 4", "--n must be between 0"},
        {"run --m abc --n 4 --k 4", "--m"},
        {"run --m 4 --n 4 --k 4 --kernel tiled --tile 1025", "--tile must be between 1 and 1024"},
        {"run --m 4 --n 4 --k 4 --kernel tiled --tile -3", "--tile must be between 1"},
        {"run --m 4 --n 4 --k 4 --warmup -1", "--warmup must be between 0"},
        {"run --m 4 --n 4 --k 4 --repeat 100001", "--repeat must be between 1 and 100000"},
        {"run --m 4 --n 4 --k 4 --seed -1", "--seed"},
        {"run --m 4 --n 4 --k 4 --type ''", "--type  is unknown"},
        {"run --m 4 --n 4 --k 4 --frobnicate", "frobnicate"},
        {"frobnicate", "'frobnicate' is not a command"},
        {"run --a " + a, "--a and --b go together"},
        {"run --b " + a, "--a and --b go together"},
        {"run --a " + a + " --b " + a + " --m 2", "cannot be combined"},
        {"run --a " + a + " --b " + bi, "both must have one dtype"},
        {"run --a " + dir.string() + " --b " + a, "is a directory"},
        {"demo --device 99", "out of range"},
        {"demo --device no-such-gpu", "no device name contains"},
        {"run --m 100000 --n 100000 --k 100000", "too_large"},
        {"run --m 4000000000 --n 4000000000 --k 1 --type f64", "too_large"},
        {"run --m 4 --n 4 --k 4 --out " + (dir / "missing-dir" / "c.npy").string(), "the folder"},
        // Options checked whole before work: NaN where a number has a range, ranges in words, empty lists,
        // list items past what any device runs, the batch in the size check.
        {"run --m 4 --n 4 --k 4 --warmup-ms nan", "--warmup-ms: must be between 0 and 10000 (got nan)"},
        {"peak --target-ms nan", "--target-ms: must be between 0 and 1000 (got nan)"},
        {"run --m 4 --n 4 --k 4 --seed -1", "--seed: must be a whole number from 0 to 2^64-1, a uint64 (got -1)"},
        {"bench --sizes ''", "--sizes: is empty"},
        {"bench --shapes ''", "--shapes: is empty"},
        {"bench --types ''", "--types: is empty"},
        {"bench --kernels ''", "--kernels: is empty"},
        {"bench --tiles ''", "--tiles: is empty"},
        {"bench --latency-sizes ''", "--latency-sizes: is empty"},
        {"tune --sizes ''", "--sizes: is empty"},
        {"bench --sizes 16 --tiles 8,2000", "--tiles: '2000' has 2000, outside 1 to 1024"},
        {"run --m 128 --n 128 --k 128 --batch 65535", "a 128x128x128 product in a batch of 65535 needs A 4294901760 bytes"},
        // clamp has no default bounds (0 would zero C): each missing one named.
        {"run --m 4 --n 4 --k 4 --act clamp", "--act clamp needs both bounds, --clamp-lo and --clamp-hi; both are missing"},
        {"run --m 4 --n 4 --k 4 --act clamp --clamp-hi 1", "--clamp-lo is missing"},
        {"run --m 4 --n 4 --k 4 --act clamp --clamp-lo -1", "--clamp-hi is missing"},
        {"run --m 4 --n 4 --k 4 --act clamp --clamp-lo 1 --clamp-hi -1", "clamp needs lo <= hi (got lo 1 and hi -1)"},
    };
    for (const auto& bad : cases) {  // not a structured binding: INFO captures it, which clang 14 cannot
      const auto r = test::run_program(bad.first);
      INFO(bad.first, "\n", r.output);
      CHECK(r.code == 2);
      CHECK(contains(r.output, bad.second));
    }
    CHECK_FALSE(std::filesystem::exists(dir / "missing-dir"));
    // A range is printed in words, never as a double's 310 digits.
    CHECK_FALSE(contains(test::run_program("run --m 4 --n 4 --k 4 --seed -1").output, "17976931348623157"));
    MESSAGE(cases.size(), " bad invocations tried");
    std::filesystem::remove_all(dir);
  }

  TEST_CASE("the program: every malformed .npy is its own error and leaves no output file behind") {
    const auto dir = scratch_dir();
    const std::string good = (dir / "good.npy").string();
    const std::vector<float> g = {1, 2, 3, 4};
    npy::write(good, DataType::f32, 2, 2, g.data());
    const std::string tail = "'fortran_order': False, 'shape': (2, 2), }";
    std::string huge_header = npy_file("{'descr': '<f4', " + tail, 16);
    huge_header[8] = '\xff';  // the header length now claims 0xff40-odd bytes; the file has 80
    huge_header[9] = '\xff';
    const std::vector<std::pair<std::string, std::string>> files = {
        {"", "bad magic"},
        {"\x93NUMPY", "bad magic"},
        {std::string("\x93NUMPY\x01\x00", 8), "truncated header"},
        {huge_header, "truncated header: it claims 65535 bytes"},
        {npy_file("{'descr': '<f4', " + tail, 12), "truncated data"},
        {npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (100000, 100000), }", 16),
         "truncated data: the header describes 100000x100000"},
        {npy_file("{'descr': '<u2', " + tail, 8), "unsupported dtype '<u2'"},
        {npy_file("{'descr': '|b1', " + tail, 4), "unsupported dtype"},
        {npy_file("{'descr': '<i8', " + tail, 32), "unsupported dtype '<i8'"},
        {npy_file("{'descr': '>f8', " + tail, 32), "big-endian"},
        {npy_file("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16), "Fortran-order"},
        {npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 4), "0-D"},
        {npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 1, 1), }", 16), "4-D"},
        {npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 2), }", 16), "bad shape"},
        {npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), 'extra': 1}", 16), "'extra'"},
        {npy_file("not a dict at all", 16), "malformed header"},
    };
    int i = 0;
    for (const auto& [bytes, words] : files) {
      const auto path = dir / ("bad" + std::to_string(i++) + ".npy");
      const auto out = dir / "c.npy";
      write_bytes(path, bytes);
      for (const std::string& args : {"run --a " + path.string() + " --b " + good + " --out " + out.string(),
                                     "run --a " + good + " --b " + path.string() + " --out " + out.string()}) {
        const auto r = test::run_program(args);
        INFO(args, "\n", r.output);
        CHECK(r.code == 2);
        CHECK(contains(r.output, "file_format"));
        CHECK(contains(r.output, words));
        CHECK(contains(r.output, path.string()));  // the error names the file
        CHECK_FALSE(std::filesystem::exists(out));
        CHECK_FALSE(std::filesystem::exists(out.string() + ".partial"));
      }
    }
    MESSAGE(files.size(), " malformed .npy files tried, each as A and as B");
    std::filesystem::remove_all(dir);
  }
}
