#include "pblas/settings.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace vkgemm::pblas {
namespace {

// The value of `name`, or null where it is unset or empty.
const char* value(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

}  // namespace

const Settings& settings() {
  static const Settings s = [] {
    Settings r;
    if (const char* v = value("VKGEMM_PBLAS")) {
      if (std::strcmp(v, "off") == 0) r.off = true;
      else if (std::strcmp(v, "gather") != 0)
        std::fprintf(stderr, "vkgemm-pblas: VKGEMM_PBLAS='%s' is not 'gather' or 'off'; using 'gather'\n", v);
    }
    if (const char* v = value("VKGEMM_PBLAS_TRANSPORT")) {
      if (std::strcmp(v, "mpi") == 0) r.direct = false;
      else if (std::strcmp(v, "direct") != 0)
        std::fprintf(stderr, "vkgemm-pblas: VKGEMM_PBLAS_TRANSPORT='%s' is not 'direct' or 'mpi'; using 'direct'\n", v);
    }
    if (const char* v = value("VKGEMM_BLAS_VERBOSE")) r.verbose = std::atoi(v);
    if (const char* v = value("VKGEMM_BLAS_CHECK")) r.check = std::strcmp(v, "1") == 0;
    r.precision = value("VKGEMM_BLAS_PRECISION");  // judged by the engine, as the drop-in's
    if (const char* v = value("VKGEMM_TEST_PBLAS_FAIL_PRODUCT")) r.fail_product = std::atol(v);
    if (const char* v = value("VKGEMM_TEST_PBLAS_PART_COLUMNS")) r.part_columns = std::atol(v);
    return r;
  }();
  return s;
}

}  // namespace vkgemm::pblas
