#include "tuning/tuning_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "vkgemm/error.hpp"
#include "vkgemm/files.hpp"

namespace vkgemm::tuning {
namespace {

// The advisory lock beside the tuning file, held while this object lives. The lock file is opened, never
// written, and O_NOFOLLOW keeps a symlink planted there from being opened.
class FileLock {
 public:
  explicit FileLock(const std::string& path) : path_(path + ".lock") {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd_ < 0) fail("cannot open the lock file");
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) fail("the lock file is not a regular file");
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) fail("cannot lock");
    }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  [[noreturn]] void fail(const char* what) {
    const int error = errno;
    if (fd_ >= 0) ::close(fd_);
    throw Error(ErrorCode::io_error, fmt::format("{}: {}: {}", path_, what, std::strerror(error)));
  }
  std::string path_;
  int fd_ = -1;
};

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

void create_folder(const std::string& path) {
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  if (folder.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  std::error_code exists_ec;
  if (ec && !std::filesystem::is_directory(folder, exists_ec)) {  // another process may have made it meanwhile
    throw Error(ErrorCode::io_error, fmt::format("cannot create the folder {} for the tuning file {}: {}",
                                                 folder.string(), path, ec.message()));
  }
}

// The file's table; a file that is there but unreadable or malformed is an error naming the fix, since
// writing over it would lose what it held.
Table existing_table(const std::string& path) {
  Table table;
  if (!exists(path)) return table;
  try {
    table.add_json(read_tuning_file(path), path);
  } catch (const Error& e) {
    throw Error(e.code(), fmt::format("{} (vkgemm will not write over it: move it aside or delete it, then tune "
                                      "again)",
                                      e.what()));
  }
  return table;
}

}  // namespace

std::string read_tuning_file(const std::string& path) {
  files::InputFile file(path);
  if (file.size() > kMaxTuningFileBytes) {
    throw Error(ErrorCode::file_format, fmt::format("{}: {} bytes; a tuning file has at most {}", path, file.size(),
                                                    kMaxTuningFileBytes));
  }
  std::string text(static_cast<size_t>(std::min<uint64_t>(file.size(), 4096)), '\0');
  file.read(text.data(), text.size());
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{') {
    throw Error(ErrorCode::file_format,
                fmt::format("{}: not a tuning file (it should be JSON starting with '{{'; it starts '{}')", path,
                            files::printable(text.substr(first == std::string::npos ? 0 : first, 16))));
  }
  const size_t head = text.size();
  text.resize(static_cast<size_t>(file.size()));
  file.read(text.data() + head, text.size() - head);
  return text;
}

void load_user_tuning_file(Table& table, const std::string& path) {
  if (!exists(path)) return;  // nothing tuned yet (`vkgemm tune` creates it)
  try {
    table.add_layer_json(read_tuning_file(path), path);
  } catch (const Error& e) {
    static std::mutex mutex;
    static std::set<std::string> reported;
    const std::lock_guard lock(mutex);
    if (reported.insert(path).second) {
      fmt::print(stderr, "vkgemm: ignoring a tuning file (the built-in tables serve): {}\n", e.what());
    }
  }
}

std::string merge_into_tuning_file(const DeviceInfo& device, const std::vector<Entry>& entries,
                                   const std::string& path) {
  create_folder(path);
  const FileLock lock(path);
  Table table = existing_table(path);
  table.update(device, entries);
  std::string text = table.to_json();
  files::write_atomically(path, text);
  return text;
}

void check_tuning_file_writable(const std::string& path) {
  create_folder(path);
  files::check_destination(path, "the tuning file");
  const FileLock lock(path);
  (void)existing_table(path);
}

}  // namespace vkgemm::tuning
