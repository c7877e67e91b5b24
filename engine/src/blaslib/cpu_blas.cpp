// Finding the CPU BLAS without finding ourselves (cpu_blas.hpp states the search).
#include "blaslib/cpu_blas.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "blaslib/blas_environment.hpp"

namespace vkgemm::blaslib {
namespace {

// The base address of the object holding `address` (null if none).
const void* object_base(const void* address) {
  Dl_info info{};
  if (!address || dladdr(address, &info) == 0) return nullptr;
  return info.dli_fbase;
}

const void* own_base() {
  static const void* base = object_base(reinterpret_cast<const void*>(&own_base));
  return base;
}

// `name` in the object `handle`, unless it is this library's own definition (a copy of this library opened
// under another name has its own base, so the marker vkgemm_blas_marker tells it apart too).
void* foreign_symbol(void* handle, const char* name) {
  void* address = dlsym(handle, name);
  if (!address || object_base(address) == own_base()) return nullptr;
  void* marker = dlsym(handle, "vkgemm_blas_marker");
  if (marker && object_base(marker) == object_base(address)) return nullptr;  // another copy of this library
  return address;
}

std::vector<std::string> loaded_objects() {
  std::vector<std::string> names;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (info->dlpi_name && info->dlpi_name[0]) static_cast<std::vector<std::string>*>(data)->emplace_back(info->dlpi_name);
        return 0;
      },
      &names);
  return names;
}

// Debian's libblas.so.3 alternatives, highest priority first (their postinst scripts' priorities).
std::vector<std::string> debian_alternatives() {
#if defined(__x86_64__)
  const std::string dir = "/usr/lib/x86_64-linux-gnu/";
#elif defined(__aarch64__)
  const std::string dir = "/usr/lib/aarch64-linux-gnu/";
#else
  const std::string dir = "/usr/lib/";
#endif
  std::vector<std::string> out;
  for (const char* sub : {"openblas-pthread", "openblas-openmp", "openblas-serial", "blis-pthread", "blis-openmp",
                          "blis-serial", "atlas", "blas"})
    out.push_back(dir + sub + "/libblas.so.3");
  return out;
}

struct Found {
  void* address = nullptr;
  std::string library = "nowhere";
};

Found search(const char* name) {
  if (const std::string& path = blas_environment().cpu_library; !path.empty()) {
    // The named library only: a user who names one means that one.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (void* address = handle ? foreign_symbol(handle, name) : nullptr) return {address, path};
    return {};
  }
  for (const std::string& object : loaded_objects()) {
    void* handle = dlopen(object.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (!handle) continue;
    void* address = foreign_symbol(handle, name);
    dlclose(handle);  // RTLD_NOLOAD took a reference of its own; the object stays loaded
    if (address) return {address, object};
  }
  for (const std::string& path : debian_alternatives()) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) continue;
    if (void* address = foreign_symbol(handle, name)) return {address, path};
    dlclose(handle);
  }
  return {};
}

std::mutex found_mutex;
std::map<std::string, Found>& found_symbols() {
  static std::map<std::string, Found> symbols;
  return symbols;
}

const Found& lookup(const char* name) {
  std::lock_guard lock(found_mutex);
  auto& symbols = found_symbols();
  auto it = symbols.find(name);
  if (it == symbols.end()) it = symbols.emplace(name, search(name)).first;
  return it->second;
}

}  // namespace

void* cpu_symbol(const char* name) { return lookup(name).address; }

std::string cpu_library_of(const char* name) { return lookup(name).library; }

}  // namespace vkgemm::blaslib

// Marks this library in any object that holds it, so a second copy of it is never taken for the CPU BLAS.
extern "C" __attribute__((visibility("default"))) const char vkgemm_blas_marker[] = "vkgemm drop-in BLAS";
