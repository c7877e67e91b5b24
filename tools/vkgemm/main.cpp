// The vkgemm program: devices, demo, run, tune, bench. Results on stdout, errors on stderr.
// Exit codes: 0 success, 1 a failed check, 2 an error, 3 validation messages.
#include <cstdlib>
#include <cstring>

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

}  // namespace vkgemm::cli

int main(int argc, char** argv) {
  using namespace vkgemm;
  CLI::App app{fmt::format("vkgemm {}: dense matrix multiplication on any Vulkan device", version), "vkgemm"};
  app.set_version_flag("--version", version);
  app.require_subcommand(1);
  cli::CommonOptions common;
  const auto devices = cli::add_devices_command(app);
  const auto demo = cli::add_demo_command(app, common);
  const auto run = cli::add_run_command(app, common);
  const auto tune = cli::add_tune_command(app, common);
  const auto bench = cli::add_bench_command(app, common);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    if (app.got_subcommand("devices")) return devices();
    if (app.got_subcommand("demo")) return demo();
    if (app.got_subcommand("run")) return run();
    if (app.got_subcommand("tune")) return tune();
    if (app.got_subcommand("bench")) return bench();
  } catch (const Error& e) {
    fmt::print(stderr, "vkgemm: error ({}): {}\n", to_string(e.code()), e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "vkgemm: error: {}\n", e.what());
    return 2;
  }
  return 2;
}
