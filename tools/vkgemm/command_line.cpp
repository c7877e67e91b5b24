// Parsing the command line (see command_line.hpp), and what every command that opens a device shares.
#include "command_line.hpp"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "commands.hpp"
#include "vkgemm/vkgemm.hpp"

namespace vkgemm::cli {

Engine open_engine(const CommonOptions& common) {
  EngineOptions options;
  options.device = common.device;
  const char* env = std::getenv("VKGEMM_VALIDATION");
  options.validation = common.validation || (env && std::strcmp(env, "0") != 0 && *env);
  return Engine(options);
}

int finish(const Engine& engine, int code) {
  if (const uint64_t n = engine.validation_message_count()) {
    fmt::print(stderr, "vkgemm: {} validation message(s) were reported\n", n);
    return 3;
  }
  return code;
}

namespace {
// The parsed options live here; the commands' actions refer to them, so `run` keeps them alive.
struct Program {
  CLI::App app{fmt::format("vkgemm {}: dense matrix multiplication on any Vulkan device", version), "vkgemm"};
  CommonOptions common;
  std::function<int()> devices, demo, tune, bench;
  Command run;
};
}  // namespace

CommandLine parse_command_line(int argc, const char* const* argv) {
  auto p = std::make_shared<Program>();
  p->app.set_version_flag("--version", version);
  p->app.require_subcommand(1);
  p->devices = add_devices_command(p->app);
  p->demo = add_demo_command(p->app, p->common);
  p->run = add_run_command(p->app, p->common);
  p->tune = add_tune_command(p->app, p->common);
  p->bench = add_bench_command(p->app, p->common);
  CommandLine out;
  try {
    p->app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::ostringstream o, err;
    const int code = p->app.exit(e, o, err);
    out.exit_code = code == 0 ? 0 : 2;
    out.out = o.str();
    out.err = err.str();
    // CLI11 reads an unknown command as a stray argument and only says a subcommand is required.
    const std::string first = argc > 1 ? argv[1] : "";
    const bool known = first == "devices" || first == "demo" || first == "run" || first == "tune" || first == "bench";
    if (!first.empty() && first[0] != '-' && !known) {
      out.err = fmt::format("vkgemm: '{}' is not a command (devices, demo, run, tune, bench); see vkgemm --help\n",
                            argv[1]);
    }
    return out;
  }
  if (p->app.got_subcommand("devices")) {
    out.run = [p] { return p->devices(); };
  } else if (p->app.got_subcommand("demo")) {
    out.run = [p] { return p->demo(); };
  } else if (p->app.got_subcommand("tune")) {
    out.run = [p] { return p->tune(); };
  } else if (p->app.got_subcommand("bench")) {
    out.run = [p] { return p->bench(); };
  } else {
    p->run.check();
    out.run = [p] { return p->run.run(); };
  }
  return out;
}

}  // namespace vkgemm::cli
