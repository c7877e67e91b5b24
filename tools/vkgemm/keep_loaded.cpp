#include "keep_loaded.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include <dlfcn.h>

#include <fmt/format.h>

namespace vkgemm::cli {

void keep_libraries_loaded() {
  const char* env = std::getenv("VKGEMM_KEEP_LOADED");
  if (!env) return;
  const std::string list = env;
  for (size_t start = 0; start <= list.size();) {
    const size_t end = std::min(list.find(':', start), list.size());
    const std::string lib = list.substr(start, end - start);
    if (!lib.empty() && !dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)) {
      fmt::print(stderr, "VKGEMM_KEEP_LOADED: cannot open {}: {}\n", lib, dlerror());
    }
    start = end + 1;
  }
}

}  // namespace vkgemm::cli
