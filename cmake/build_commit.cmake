# Run at build time (cmake -P) by the vkgemm_build_commit target: writes OUTPUT, a C++ file defining
# vkgemm::cli::build_commit as `git rev-parse --short HEAD` of SOURCE_DIR, with "-dirty" when tracked files
# differ from that commit, or "unknown" outside a git checkout (a source tarball, a copied tree).
# file(CONFIGURE) leaves OUTPUT untouched when nothing changed, so a build with no new commit rebuilds nothing.
cmake_minimum_required(VERSION 3.22)
set(commit unknown)
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                  OUTPUT_VARIABLE head RESULT_VARIABLE head_rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(head_rc EQUAL 0 AND head)
    set(commit ${head})
    execute_process(COMMAND ${GIT_EXECUTABLE} diff --quiet HEAD -- WORKING_DIRECTORY ${SOURCE_DIR}
                    RESULT_VARIABLE dirty_rc ERROR_QUIET)
    if(NOT dirty_rc EQUAL 0)
      string(APPEND commit "-dirty")
    endif()
  endif()
endif()
file(CONFIGURE OUTPUT ${OUTPUT} CONTENT
"// Generated at build time by cmake/build_commit.cmake.
#include \"build_commit.hpp\"
namespace vkgemm::cli {
const char* const build_commit = \"@commit@\";
}
" @ONLY)
