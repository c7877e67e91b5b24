// The vkgemm program's commands. Each registers its own options on the subcommand command_line.cpp made
// for it (the shared --device, --validate and --seed are added there, once, from the command table);
// results go to stdout, errors to stderr, and the return value is the process exit code.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "vkgemm/engine.hpp"

namespace vkgemm::cli {

// Options the commands share; which command takes which is said by the command table (command_line.cpp).
struct CommonOptions {
  std::string device;           // --device: index or name substring
  bool validation = false;      // --validate, or VKGEMM_VALIDATION=1
  std::optional<uint64_t> seed;  // --seed; absent: a fresh one, printed
};

// A registered subcommand: `check` validates its parsed option values (throws vkgemm::Error, opens no
// device, reads no file); `run` runs it and returns the exit code.
struct Command {
  std::function<void()> check = [] {};
  std::function<int()> run;
};

// Each adds its command's own options to `cmd` and returns what to check and run when it is chosen.
Command add_devices_command(CLI::App& cmd, CommonOptions& common);
Command add_demo_command(CLI::App& cmd, CommonOptions& common);
Command add_run_command(CLI::App& cmd, CommonOptions& common);
Command add_tune_command(CLI::App& cmd, CommonOptions& common);
Command add_bench_command(CLI::App& cmd, CommonOptions& common);
Command add_peak_command(CLI::App& cmd, CommonOptions& common);

// An engine for the common options: validation messages are counted and reported by finish().
Engine open_engine(const CommonOptions& common);
// Exit code 3 (and a line on stderr) when validation reported anything, else `code`.
int finish(const Engine& engine, int code);

}  // namespace vkgemm::cli
