// The files vkgemm writes and reads (vkgemm/files.hpp): whole-or-nothing private writes that never follow a
// planted symlink or replace a special file, destinations checked before work, bounded reads, and the
// tuning file as a small database (merged under a lock, layered over the built-in tables, a corrupt one
// ignored). All in a scratch folder; nothing here is timed.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "npy.hpp"
#include "support.hpp"
#include "tuning/tuning_file.hpp"
#include "tuning/tuning_table.hpp"
#include "vkgemm/error.hpp"
#include "vkgemm/files.hpp"
#include "vkgemm/tuning.hpp"

using namespace vkgemm;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("vkgemm-files-{}-{}", name, getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void put(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// The names in `dir`: a write must leave no temporary file behind.
std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

mode_t mode_of(const fs::path& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

template <typename F>
std::string error_of(F&& f, ErrorCode code) {
  try {
    f();
  } catch (const Error& e) {
    CHECK_MESSAGE(e.code() == code, e.what());
    return e.what();
  }
  FAIL("no error");
  return {};
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A device the tuning tests write for: no Vulkan needed (forked writers must not share a device).
DeviceInfo fake_device(const std::string& name) {
  DeviceInfo d;
  d.name = name;
  d.vendor_id = 0x1234;
  d.driver_version = "1.0";
  return d;
}

TuningEntry entry(uint32_t m) {
  TuningEntry e;
  e.m = m, e.n = 64, e.k = 64;
  e.kernel = Kernel::tiled;
  e.tile = 16;
  e.gflops = m;
  return e;
}

}  // namespace

TEST_SUITE("files") {
  TEST_CASE("a write is private and whole: a planted symlink is replaced, never written through") {
    const fs::path dir = scratch("symlink");
    put(dir / "victim", "precious");
    fs::create_symlink(dir / "victim", dir / "out.json");
    files::write_atomically((dir / "out.json").string(), "new");
    CHECK(slurp(dir / "victim") == "precious");
    CHECK_FALSE(fs::is_symlink(dir / "out.json"));
    CHECK(slurp(dir / "out.json") == "new");
    CHECK(names_in(dir) == std::vector<std::string>{"out.json", "victim"});
    // The fixed names older versions wrote through ("X.partial", "X.tmp") are never opened.
    fs::create_symlink(dir / "victim", dir / "c.npy.partial");
    fs::create_symlink(dir / "victim", dir / "c.npy.tmp");
    const std::vector<float> m = {1, 2, 3, 4};
    npy::write((dir / "c.npy").string(), DataType::f32, 2, 2, m.data());
    CHECK(slurp(dir / "victim") == "precious");
    CHECK(npy::read((dir / "c.npy").string()).rows == 2);
    fs::remove_all(dir);
  }

  TEST_CASE("special destinations are refused and left alone; an existing file's mode is kept") {
    const fs::path dir = scratch("special");
    fs::create_directory(dir / "folder");
    REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
    for (const auto& special : std::vector<std::pair<std::string, std::string>>{
             {(dir / "folder").string(), "a folder"}, {(dir / "fifo").string(), "a FIFO"},
             {"/dev/full", "a character device"}, {"/dev/null", "a character device"}}) {
      const std::string& path = special.first;  // not a binding: the lambdas capture it (clang 14)
      const std::string& kind = special.second;
      const std::string what = error_of([&] { files::write_atomically(path, "x"); }, ErrorCode::io_error);
      CHECK(contains(what, path));
      CHECK(contains(what, kind));
      CHECK(contains(error_of([&] { files::check_destination(path, "--out"); }, ErrorCode::io_error), "--out"));
    }
    CHECK(fs::is_directory(dir / "folder"));
    CHECK(fs::is_fifo(dir / "fifo"));
    put(dir / "kept", "old");
    REQUIRE(::chmod((dir / "kept").c_str(), 0640) == 0);
    files::write_atomically((dir / "kept").string(), "new");
    CHECK(mode_of(dir / "kept") == 0640);
    CHECK(slurp(dir / "kept") == "new");
    const mode_t mask = ::umask(022);
    files::write_atomically((dir / "fresh").string(), "x");
    ::umask(mask);
    CHECK(mode_of(dir / "fresh") == 0644);
    fs::remove_all(dir);
  }

  TEST_CASE("a failing write names the path and the reason and leaves the old file as it was") {
    const fs::path dir = scratch("full");
    put(dir / "c.json", "old");
    // A file size limit makes write() fail with EFBIG, as a full disk fails it with ENOSPC.
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      ::signal(SIGXFSZ, SIG_IGN);
      const rlimit limit{16, 16};
      ::setrlimit(RLIMIT_FSIZE, &limit);
      try {
        files::write_atomically((dir / "c.json").string(), std::string(4096, 'x'));
      } catch (const Error& e) {
        const std::string what = e.what();
        ::_exit(contains(what, (dir / "c.json").string()) && contains(what, std::strerror(EFBIG)) ? 0 : 3);
      }
      ::_exit(4);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(slurp(dir / "c.json") == "old");
    CHECK(names_in(dir) == std::vector<std::string>{"c.json"});
    fs::remove_all(dir);
  }

  TEST_CASE("destinations are checked before work: a missing folder, and two outputs naming one file") {
    const fs::path dir = scratch("check");
    CHECK(contains(error_of([&] { files::check_destination((dir / "missing" / "c.npy").string(), "--out"); },
                            ErrorCode::io_error),
                   "the folder"));
    files::check_destination((dir / "c.npy").string(), "--out");
    CHECK(names_in(dir).empty());  // the probe is gone
    put(dir / "a", "a");
    fs::create_hard_link(dir / "a", dir / "hard");
    fs::create_symlink(dir / "a", dir / "soft");
    const std::string a = (dir / "a").string();
    for (const std::string& other : {a, (dir / "." / "a").string(), (dir / "hard").string(), (dir / "soft").string()}) {
      const std::string what =
          error_of([&] { files::check_distinct({{"--out", a}, {"--json", other}}); }, ErrorCode::invalid_argument);
      CHECK(contains(what, "--out"));
      CHECK(contains(what, "--json"));
    }
    files::check_distinct({{"--out", a}, {"--json", (dir / "b").string()}, {"--csv", ""}});
    fs::remove_all(dir);
  }

  TEST_CASE("reads: only regular files, the magic first, a header's claims checked against the file's size") {
    const fs::path dir = scratch("read");
    REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
    for (const std::string& path : {std::string("/dev/zero"), (dir / "fifo").string(), dir.string()}) {
      CHECK(contains(error_of([&] { npy::read(path); }, ErrorCode::io_error), path));  // neither hangs nor eats memory
    }
    // A header claiming 4 GiB of float64 data in a file of a few bytes: refused before any allocation.
    std::string claims = std::string("\x93NUMPY\x01\x00", 8);
    const std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (65536, 65536), }\n";
    claims += static_cast<char>(dict.size()), claims += '\0', claims += dict;
    put(dir / "claims.npy", claims + "12345678");
    CHECK(contains(error_of([&] { npy::read((dir / "claims.npy").string()); }, ErrorCode::file_format),
                   "truncated data"));
    // A garbage header key, NUL and control bytes included, is quoted whole in printable escapes.
    std::string garbage = std::string("\x93NUMPY\x01\x00", 8);
    const std::string bad = std::string("{'a\x01\x00z\xff': 1}", 13);
    garbage += static_cast<char>(bad.size()), garbage += '\0', garbage += bad;
    put(dir / "garbage.npy", garbage);
    const std::string what = error_of([&] { npy::read((dir / "garbage.npy").string()); }, ErrorCode::file_format);
    CHECK(contains(what, "'a\\x01\\x00z\\xff'"));
    CHECK(files::printable(std::string("a\\b\n", 4)) == "a\\x5cb\\x0a");
    fs::remove_all(dir);
  }

  TEST_CASE("the tuning file: concurrent writers merge, every entry survives, the file stays valid") {
    const fs::path dir = scratch("tuning");
    const std::string path = (dir / "sub" / "tuning.json").string();
    constexpr int kWriters = 6, kEach = 12;
    std::vector<pid_t> children;
    for (int w = 0; w < kWriters; ++w) {
      const pid_t child = ::fork();
      REQUIRE(child >= 0);
      if (child == 0) {
        int code = 0;
        try {
          // Half the writers share a device table (merged entry by entry), half have their own.
          const DeviceInfo device = fake_device(w % 2 ? "shared" : fmt::format("own {}", w));
          for (int i = 0; i < kEach; ++i) {
            write_tuning_file(device, {entry(static_cast<uint32_t>(1 + w * kEach + i))}, path);
          }
        } catch (...) {
          code = 1;
        }
        ::_exit(code);
      }
      children.push_back(child);
    }
    for (const pid_t child : children) {
      int status = 0;
      ::waitpid(child, &status, 0);
      CHECK(WIFEXITED(status));
      CHECK(WEXITSTATUS(status) == 0);
    }
    tuning::Table table;
    table.add_json(tuning::read_tuning_file(path), path);
    std::vector<uint32_t> found;
    for (const auto& t : table.devices()) {
      for (const auto& e : t.entries) found.push_back(e.m);
    }
    std::sort(found.begin(), found.end());
    std::vector<uint32_t> expected;
    for (uint32_t m = 1; m <= kWriters * kEach; ++m) expected.push_back(m);
    CHECK(found == expected);
    CHECK(names_in(dir / "sub") == std::vector<std::string>{"tuning.json", "tuning.json.lock"});
    fs::remove_all(dir);
  }

  TEST_CASE("the tuning file: a corrupt or special one is ignored by readers and never written over") {
    const fs::path dir = scratch("corrupt");
    put(dir / "corrupt.json", "{\"format\": \"vkgemm-tuning-1\", \"devices\": [");
    fs::create_directory(dir / "folder.json");
    for (const std::string& path : {(dir / "corrupt.json").string(), (dir / "folder.json").string(),
                                    std::string("/dev/zero")}) {
      tuning::Table table;
      for (const auto& [name, text] : tuning::builtin_tables()) table.add_json(text, name);
      const size_t builtin = table.devices().size();
      CHECK_NOTHROW(tuning::load_user_tuning_file(table, path));
      CHECK(table.devices().size() == builtin);
    }
    const std::string corrupt = (dir / "corrupt.json").string();
    const std::string what =
        error_of([&] { write_tuning_file(fake_device("d"), {entry(8)}, corrupt); }, ErrorCode::file_format);
    CHECK(contains(what, corrupt));
    CHECK(contains(what, "move it aside"));
    CHECK(slurp(corrupt) == "{\"format\": \"vkgemm-tuning-1\", \"devices\": [");
    CHECK_THROWS_AS(check_tuning_file(corrupt), Error);
    CHECK_THROWS_AS(check_tuning_file("/dev/null/vkgemm/tuning.json"), Error);  // its folder cannot be made
    CHECK_NOTHROW(check_tuning_file((dir / "new" / "tuning.json").string()));
    fs::remove_all(dir);
  }

  TEST_CASE("the tuning file: user entries are layered over the built-in table, replacing only their own") {
    tuning::Table builtin;
    for (const auto& [name, text] : tuning::builtin_tables()) builtin.add_json(text, name);
    const auto lavapipe = std::find_if(builtin.devices().begin(), builtin.devices().end(),
                                       [](const tuning::DeviceTable& t) { return contains(t.device, "llvmpipe"); });
    REQUIRE(lavapipe != builtin.devices().end());
    DeviceInfo device;
    device.vendor_id = lavapipe->vendor_id, device.name = lavapipe->device, device.driver_version = lavapipe->driver;
    const size_t builtin_entries = lavapipe->entries.size();
    REQUIRE(builtin_entries > 0);
    const tuning::Entry first = lavapipe->entries.front();
    REQUIRE_FALSE(builtin.exact(device, DataType::f32, Kernel::tiled, 24, 24, 24));
    // A user file that tuned 24^3 (tiled), a shape the built-in table lacks, and re-tuned its first shape.
    const std::string user = fmt::format(
        R"({{"format": "vkgemm-tuning-1", "devices": [{{"vendor_id": {}, "device": "{}", "driver": "{}",
        "entries": [{{"type": "f32", "m": 24, "n": 24, "k": 24, "kernel": "tiled", "tile": 8, "gflops": 1}},
                    {{"type": "{}", "m": {}, "n": {}, "k": {}, "kernel": "tiled", "tile": 16, "gflops": 2}}]}}]}})",
        device.vendor_id, device.name, device.driver_version, to_string(first.type), first.m, first.n, first.k);
    tuning::Table layered = builtin;
    layered.add_layer_json(user, "user.json");
    const auto [table, tier] = layered.find(device);
    REQUIRE(table != nullptr);
    CHECK(tier == tuning::Tier::device);
    CHECK(table->entries.size() == builtin_entries + 1);  // 24^3 added, the first shape replaced
    const auto at24 = layered.exact(device, DataType::f32, Kernel::tiled, 24, 24, 24);
    REQUIRE(at24);
    CHECK(at24->tile == 8);
    const auto replaced = layered.exact(device, first.type, Kernel::tiled, first.m, first.n, first.k);
    REQUIRE(replaced);
    CHECK(replaced->tile == 16);
    // Every other built-in shape is still served as before.
    for (const tuning::Entry& e : lavapipe->entries) {
      if (e.m == first.m && e.n == first.n && e.k == first.k && e.type == first.type) continue;
      const auto before = builtin.lookup(device, e.type, e.m, e.n, e.k, e.trans_a, e.trans_b);
      const auto after = layered.lookup(device, e.type, e.m, e.n, e.k, e.trans_a, e.trans_b);
      REQUIRE(before);
      REQUIRE(after);
      CHECK(before->kernel == after->kernel);
      CHECK(before->gflops == after->gflops);
    }
  }

  TEST_CASE("the tuning file: the emulated product's cost model is read, written back, layered and checked") {
    tuning::Table builtin;
    for (const auto& [name, text] : tuning::builtin_tables()) builtin.add_json(text, name);
    const auto h200 = std::find_if(builtin.devices().begin(), builtin.devices().end(),
                                   [](const tuning::DeviceTable& t) { return t.device == "NVIDIA H200"; });
    REQUIRE(h200 != builtin.devices().end());
    REQUIRE(h200->emulation);
    CHECK(h200->emulation->int8_ops > 1e14);
    tuning::Table again;
    again.add_json(builtin.to_json(), "round trip");
    const auto back = std::find_if(again.devices().begin(), again.devices().end(),
                                   [](const tuning::DeviceTable& t) { return t.device == "NVIDIA H200"; });
    REQUIRE(back != again.devices().end());
    REQUIRE(back->emulation);
    CHECK(back->emulation->merge_ns == h200->emulation->merge_ns);
    CHECK(back->emulation->measured == h200->emulation->measured);
    const std::string bad = R"({"format": "vkgemm-tuning-1", "devices": [{"vendor_id": 1, "device": "x", "driver": "1",
        "emulation": {"int8_tops": -1, "split_ns": 0, "merge_ns": 0, "fixed_us": 0, "f64_gflops": 1, "f32_gflops": 1},
        "entries": []}]})";
    tuning::Table refused;
    CHECK_THROWS_AS(refused.add_json(bad, "bad.json"), Error);
  }

  TEST_CASE("the program: outputs checked before the product, special files refused, a corrupt tuning file ignored") {
    const fs::path dir = scratch("program");
    const std::string good = (dir / "good.npy").string(), out = (dir / "c.npy").string();
    const std::vector<float> g = {1, 2, 3, 4};
    npy::write(good, DataType::f32, 2, 2, g.data());
    const std::string product = "run --m 4 --n 4 --k 4 ";
    const std::vector<std::pair<std::string, std::string>> refused = {
        {product + "--out /dev/full", "--out /dev/full: it is a character device"},
        {product + "--json /dev/full", "--json /dev/full: it is a character device"},
        {product + "--out " + dir.string(), "it is a folder"},
        {product + "--out " + (dir / "missing" / "c.npy").string(), "the folder"},
        {product + "--out " + out + " --json " + out, "name the same file"},
        {"run --a /dev/zero --b " + good, "/dev/zero: is not a regular file"},
        {"run --a " + good + " --b " + dir.string(), "is a directory"},
        {"peak --json /dev/full", "--json /dev/full: it is a character device"},
        {"bench --json " + out + " --csv " + out, "name the same file"},
        {"tune --sizes 8 --out /dev/null/vkgemm/tuning.json", "/dev/null/vkgemm"},
    };
    for (const auto& [args, words] : refused) {
      const auto r = test::run_program(args);
      const std::string said = std::string(args) + "\n" + r.output;  // INFO captures: not a binding (clang 14)
      INFO(said);
      CHECK(r.code == 2);
      CHECK(contains(r.output, words));
      CHECK_FALSE(contains(r.output, "time:"));   // refused before any product ran
      CHECK_FALSE(contains(r.output, "tuning the blocked kernel"));
    }
    CHECK(names_in(dir) == std::vector<std::string>{"good.npy"});
    // A symlink planted at the temporary names older versions used: the target is never touched.
    put(dir / "victim", "precious");
    fs::create_symlink(dir / "victim", dir / "c.npy.partial");
    const auto wrote = test::run_program(product + "--out " + out);
    INFO(wrote.output);
    CHECK(wrote.code == 0);
    CHECK(slurp(dir / "victim") == "precious");
    CHECK(npy::read(out).rows == 4);
    // A corrupt tuning file: reported once, naming it, and the product runs on the built-in tables.
    const std::string corrupt = (dir / "tuning.json").string();
    put(corrupt, "{\"devices\": [");
    ::setenv("VKGEMM_TUNING_FILE", corrupt.c_str(), 1);
    const auto ran = test::run_program(product + "--verify");
    ::unsetenv("VKGEMM_TUNING_FILE");
    INFO(ran.output);
    CHECK(ran.code == 0);
    const size_t at = ran.output.find("ignoring a tuning file");
    CHECK(at != std::string::npos);
    CHECK(ran.output.find("ignoring a tuning file", at + 1) == std::string::npos);
    CHECK(contains(ran.output, corrupt));
    fs::remove_all(dir);
  }
}
