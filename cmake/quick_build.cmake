# The quick tier's build (CMakePresets.json's `quick`: tools/run-tests.sh --quick), made cheaper to compile from a
# fresh clone on a 2-core machine; never what CI's full run, a package or the GPU machine builds. What it
# changes and what each change saves is in docs/reliability.md ("The quick tier").
#   - -O1 instead of Release's -O3, in the targets the quick tier builds: a third less compile time; the
#     suites' own time grew by no more than the machine's load changes it.
#   - precompiled headers (fmt, doctest, the standard library's) for the engine's and the tests' files: each
#     file parsed them again before.
#   - one unity file per 8 of the program's files (vkgemm_cli): CLI11 and nlohmann-json are header-only, and
#     each command's file compiled and optimized them again. (The engine's kernel files and many test files
#     share names in anonymous namespaces by design, so they are not unity-built.)
#   - the test files at -O0 (what they run themselves is mostly calls into the engine, whose reference and
#     checks are -O1), but for the four whose own loops are hot (below): another third off their compile.
set(_quick_targets vkgemm_objects vkgemm_shaders vkgemm_cli vkgemm_program)
foreach(target IN LISTS _quick_targets)
  target_compile_options(${target} PRIVATE -O1)  # after CMAKE_<LANG>_FLAGS_RELEASE's -O3, so it wins
endforeach()
if(VKGEMM_BUILD_TESTS)
  target_compile_options(vkgemm_tests PRIVATE -O0)
  # The test files whose own loops are the suite's time: the random inputs and every product's check
  # (support.cpp), the tolerance suite's sums of up to 14336 terms in each order, the sampled check's and the
  # Ozaki model's host arithmetic. -O1 after the target's -O0; GCC takes no precompiled header built at another
  # optimization level, so these parse their headers themselves.
  # (Full paths: a relative one names a file of this folder, whatever DIRECTORY says.)
  set(_hot_tests "")
  foreach(file IN ITEMS support.cpp test_bounds.cpp test_sampled_check.cpp test_ozaki_model.cpp)
    list(APPEND _hot_tests ${PROJECT_SOURCE_DIR}/tests/${file})
  endforeach()
  set_source_files_properties(${_hot_tests} DIRECTORY ${PROJECT_SOURCE_DIR}/tests
                              PROPERTIES COMPILE_OPTIONS -O1 SKIP_PRECOMPILE_HEADERS ON)
endif()

# vkgemm_quick_headers(<target> <header>...): those headers precompiled for the target's C++ files.
function(vkgemm_quick_headers target)
  set(items "")
  foreach(header IN LISTS ARGN)
    list(APPEND items "$<$<COMPILE_LANGUAGE:CXX>:<${header}$<ANGLE-R>>")
  endforeach()
  target_precompile_headers(${target} PRIVATE ${items})
endfunction()
set(_quick_std algorithm array atomic chrono cmath cstdint cstdio cstdlib cstring functional limits memory mutex
    optional random string string_view thread vector)

# The engine's objects are linked into one relocatable object from $<TARGET_OBJECTS:vkgemm_objects>
# (engine/CMakeLists.txt), which would list a precompiled header of its own: the header is built by a target
# of its own with the same flags and reused.
# (CMake asks the target that reuses them for a C header too, for volk's C file, which skips it.)
foreach(ext cpp c)
  file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/quick_headers.${ext}  # (rewritten only when it changes)
       CONTENT "/* the engine's precompiled headers (cmake/quick_build.cmake) */\n")
endforeach()
add_library(vkgemm_quick_headers OBJECT ${CMAKE_BINARY_DIR}/quick_headers.cpp ${CMAKE_BINARY_DIR}/quick_headers.c)
target_include_directories(vkgemm_quick_headers PRIVATE $<TARGET_PROPERTY:vkgemm_objects,INCLUDE_DIRECTORIES>)
target_compile_definitions(vkgemm_quick_headers PRIVATE $<TARGET_PROPERTY:vkgemm_objects,COMPILE_DEFINITIONS>)
target_compile_options(vkgemm_quick_headers PRIVATE $<TARGET_PROPERTY:vkgemm_objects,COMPILE_OPTIONS>)
target_link_libraries(vkgemm_quick_headers PRIVATE ${VKGEMM_FMT} nlohmann_json::nlohmann_json vkgemm_warnings)
set_target_properties(vkgemm_quick_headers PROPERTIES POSITION_INDEPENDENT_CODE ON)
vkgemm_quick_headers(vkgemm_quick_headers fmt/format.h ${_quick_std})
target_precompile_headers(vkgemm_quick_headers PRIVATE "$<$<COMPILE_LANGUAGE:C>:<stdint.h$<ANGLE-R>>")
target_precompile_headers(vkgemm_objects REUSE_FROM vkgemm_quick_headers)
set_source_files_properties(${PROJECT_SOURCE_DIR}/engine/src/vk/volk_impl.c DIRECTORY ${PROJECT_SOURCE_DIR}/engine
                            PROPERTIES SKIP_PRECOMPILE_HEADERS ON)

if(VKGEMM_BUILD_TESTS)
  vkgemm_quick_headers(vkgemm_tests doctest/doctest.h fmt/format.h ${_quick_std})
  # The runner defines DOCTEST_CONFIG_IMPLEMENT before it includes doctest: its own parse.
  set_source_files_properties(${PROJECT_SOURCE_DIR}/tests/main.cpp DIRECTORY ${PROJECT_SOURCE_DIR}/tests
                              PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
endif()

set_target_properties(vkgemm_cli PROPERTIES UNITY_BUILD ON)
