// Parsing the command line (see command_line.hpp), and what every command that opens a device shares.
#include "command_line.hpp"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "build_commit.hpp"
#include "commands.hpp"
#include "option_checks.hpp"
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

// The commands, in the order help lists them: each with the shared options it takes.
struct CommandSpec {
  const char* name;
  const char* description;
  bool opens_device;      // takes --device and --validate
  const char* seed_help;  // takes --seed, with this help; nullptr: no seed
  Command (*add)(CLI::App& cmd, CommonOptions& common);
};

constexpr const char* kInputSeed = "Seed for the random inputs (default: fresh, printed)";

constexpr CommandSpec kCommands[] = {
    {"devices", "List the Vulkan devices and their limits", false, nullptr, add_devices_command},
    {"demo", "The naive-versus-tiled walkthrough: two integer examples and a 1024^2 float32 product checked "
             "against the CPU", true, nullptr, add_demo_command},
    {"run", "One GEMM, C = alpha op(A) op(B) + beta C (random inputs or .npy files), timed, optionally verified",
     true, kInputSeed, add_run_command},
    {"tune", "Search the blocked kernel's configurations on this device; verify each against the CPU reference, "
             "time it, and save the winners", true, kInputSeed, add_tune_command},
    {"bench", "Benchmark: sweep sizes, types and kernels; verify, time, report", true,
     "Seed of the run; each case's inputs come from a seed derived from it and written to the results "
     "[default: fresh, printed]", add_bench_command},
    {"peak", "The device's measured ceilings: f32 and packed f16 FMA, each cooperative-matrix shape's MMA "
             "throughput, device-memory copy bandwidth", true, nullptr, add_peak_command},
};

void add_shared_options(CLI::App& cmd, const CommandSpec& spec, CommonOptions& common) {
  if (spec.seed_help) {
    cmd.add_option("--seed", common.seed, spec.seed_help)
        ->check(uint64_number());  // "-1" would otherwise wrap to 2^64-1 silently
  }
  if (!spec.opens_device) return;
  cmd.add_option("--device", common.device, "Device index or name substring (default: VKGEMM_DEVICE, then the best)");
  cmd.add_flag("--validate", common.validation, "Run under VK_LAYER_KHRONOS_validation; any message fails");
}

std::string command_names() {
  std::string out;
  for (const CommandSpec& spec : kCommands) out += fmt::format("{}{}", out.empty() ? "" : ", ", spec.name);
  return out;
}

// The parsed options live here; the commands' actions refer to them, so `run` keeps them alive.
struct Program {
  CLI::App app{fmt::format("vkgemm {}: dense matrix multiplication on any Vulkan device", version), "vkgemm"};
  CommonOptions common;
  std::vector<std::pair<CLI::App*, Command>> commands;  // in kCommands' order
};

// A usage error (or --help, --version) as CommandLine's exit code and messages.
CommandLine parse_error(const Program& p, const CLI::ParseError& e, int argc, const char* const* argv) {
  CommandLine out;
  std::ostringstream o, err;
  const int code = p.app.exit(e, o, err);
  out.exit_code = code == 0 ? 0 : 2;
  out.out = o.str();
  out.err = err.str();
  // CLI11 reads an unknown command as a stray argument and only says a subcommand is required.
  const std::string first = argc > 1 ? argv[1] : "";
  bool known = false;
  for (const CommandSpec& spec : kCommands) known |= first == spec.name;
  if (!first.empty() && first[0] != '-' && !known) {
    out.err = fmt::format("vkgemm: '{}' is not a command ({}); see vkgemm --help\n", first, command_names());
  }
  return out;
}

}  // namespace

// "0.4.0 (commit 1a2b3c4-dirty)": the version and the commit the binary was built from, as result files name it.
std::string version_line() { return fmt::format("{} (commit {})", version, build_commit); }

CommandLine parse_command_line(int argc, const char* const* argv) {
  auto p = std::make_shared<Program>();
  p->app.set_version_flag("--version", version_line());
  p->app.require_subcommand(1);
  for (const CommandSpec& spec : kCommands) {
    CLI::App* cmd = p->app.add_subcommand(spec.name, spec.description);
    Command command = spec.add(*cmd, p->common);
    add_shared_options(*cmd, spec, p->common);
    p->commands.emplace_back(cmd, std::move(command));
  }
  try {
    p->app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return parse_error(*p, e, argc, argv);
  }
  CommandLine out;
  for (auto& [cmd, command] : p->commands) {
    if (!cmd->parsed()) continue;
    command.check();
    out.run = [p, run = command.run] { return run(); };
  }
  return out;
}

}  // namespace vkgemm::cli
