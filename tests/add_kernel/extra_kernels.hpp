// The one list entry of a kernel added as docs/architecture.md says (force-included by the add_kernel build,
// tests/CMakeLists.txt): the dummy kernel of dummy.cpp, after the list's own.
#pragma once

#define VKGEMM_EXTRA_KERNELS(X) X(dummy, 9)
