// The vkgemm program's commands. Each registers its options on a CLI11 app and runs when chosen;
// results go to stdout, errors to stderr, and the return value is the process exit code.
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "vkgemm/engine.hpp"

namespace vkgemm::cli {

// Options every command that opens a device shares.
struct CommonOptions {
  std::string device;       // --device: index or name substring
  bool validation = false;  // --validate, or VKGEMM_VALIDATION=1
};

// A registered subcommand: `check` validates its parsed option values (throws vkgemm::Error, opens no
// device, reads no file); `run` runs it and returns the exit code.
struct Command {
  std::function<void()> check;
  std::function<int()> run;
};

// Each returns the action to run when its subcommand is chosen; the action returns the exit code.
std::function<int()> add_devices_command(CLI::App& app);
std::function<int()> add_demo_command(CLI::App& app, CommonOptions& common);
Command add_run_command(CLI::App& app, CommonOptions& common);
std::function<int()> add_tune_command(CLI::App& app, CommonOptions& common);
std::function<int()> add_bench_command(CLI::App& app, CommonOptions& common);

// An engine for the common options: validation messages are counted and reported by finish().
Engine open_engine(const CommonOptions& common);
// Exit code 3 (and a line on stderr) when validation reported anything, else `code`.
int finish(const Engine& engine, int code);

}  // namespace vkgemm::cli
