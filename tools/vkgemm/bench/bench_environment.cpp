#include "bench_environment.hpp"

#include <chrono>
#include <ctime>
#include <fstream>
#include <thread>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <sys/utsname.h>

namespace vkgemm::cli::bench {

HostInfo host_info() {
  HostInfo h;
  utsname u{};
  if (uname(&u) == 0) h.os = fmt::format("{} {} {}", u.sysname, u.release, u.machine);
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      const auto start = colon == std::string::npos ? colon : line.find_first_not_of(" \t", colon + 1);
      if (start != std::string::npos) h.cpu = line.substr(start);
      break;
    }
  }
  h.threads = std::thread::hardware_concurrency();
  return h;
}

std::string utc_now_iso() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(now));
}

}  // namespace vkgemm::cli::bench
