// Whether this test build runs under AddressSanitizer (or ThreadSanitizer): the one place that asks the
// compiler. gcc says so with __SANITIZE_ADDRESS__, clang (the asan preset's compiler) with __has_feature.
// Under ASan, operator new is the runtime's, freed memory sits in quarantine (the resident set grows by
// design) and shadow memory makes address-space limits fatal: tests that depend on these ask here.
#pragma once

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define VKGEMM_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define VKGEMM_TEST_SANITIZED 1
#endif
#endif

namespace vkgemm::test {
#ifdef VKGEMM_TEST_SANITIZED
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
}  // namespace vkgemm::test
