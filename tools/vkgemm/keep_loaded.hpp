// For leak checking under sanitizers: VKGEMM_KEEP_LOADED=lib1:lib2 (tools/run-tests.sh sets it to the Vulkan
// driver and validation layer in the sanitizer pass) opens those libraries RTLD_NODELETE before anything
// else, so the loader's dlclose at vkDestroyInstance cannot unload them. LeakSanitizer scans a library's
// globals only while it is loaded; once one is unloaded, memory it still pointed to is reported as leaked,
// with frames printed as <unknown module> that no suppression can name. Unset: nothing happens.
#pragma once

namespace vkgemm::cli {

void keep_libraries_loaded();

}  // namespace vkgemm::cli
