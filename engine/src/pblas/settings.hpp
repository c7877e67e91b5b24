// Every environment variable vkgemm's PDGEMM reads, read here once (at its first call) and nowhere else
// (docs/distributed.md lists them): its own, and the drop-in BLAS's that it honours alike.
#pragma once

#include <string>

namespace vkgemm::pblas {

struct Settings {
  bool off = false;                // VKGEMM_PBLAS=off: every call to ScaLAPACK's own ("gather", the default: the rule)
  bool direct = true;              // VKGEMM_PBLAS_TRANSPORT=mpi: pieces only as messages ("direct", the default)
  int verbose = 0;                 // VKGEMM_BLAS_VERBOSE: 1 a summary at exit, 2 a line a call taken
  bool check = false;              // VKGEMM_BLAS_CHECK=1: streamed results judged on the host too
  const char* precision = nullptr; // VKGEMM_BLAS_PRECISION: the streamed products' policy (null: native)
  // VKGEMM_TEST_PBLAS_FAIL_PRODUCT=N (tests only): the process's Nth streamed device product fails as a refused
  // one would, so that the way back (C as it came, the product block by block) is shown. 0: none.
  long fail_product = 0;
  // VKGEMM_TEST_PBLAS_PART_COLUMNS=N (tests only): a streamed product's parts along N as narrow as N columns,
  // so that small products run in several parts. 0: the rule's (streamed.cpp).
  long part_columns = 0;
};

// The process's settings; a value not taken is reported on stderr once and the default used.
const Settings& settings();

}  // namespace vkgemm::pblas
