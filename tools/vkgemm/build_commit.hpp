// The commit this program was built from, for result files: `git rev-parse --short HEAD` at build time,
// "-dirty" appended when tracked files had changes, "unknown" when the build was not in a git checkout.
// Defined in a file the build generates (cmake/build_commit.cmake), never in the source tree.
#pragma once

namespace vkgemm::cli {
extern const char* const build_commit;
}
