// Writing a file whole or not at all, and checking destinations before work (vkgemm/files.hpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "vkgemm/error.hpp"
#include "vkgemm/files.hpp"

namespace vkgemm::files {
namespace {

[[noreturn]] void fail(const std::string& what, int error) {
  throw Error(ErrorCode::io_error, fmt::format("{}: {}", what, std::strerror(error)));
}

std::string folder_of(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// The destination as it is now: absent (nullopt-like: exists = false), or a regular file and its mode.
// Anything else, and a read-only file, is refused with `who` starting the message.
struct Destination {
  bool exists = false;
  mode_t mode = 0;
};

Destination inspect(const std::string& path, const std::string& who) {
  if (path.empty()) throw Error(ErrorCode::invalid_argument, fmt::format("{}: the file name is empty", who));
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return {};  // absent, or a dangling symlink (the rename replaces the link)
    fail(fmt::format("{} {}: cannot inspect it", who, path), errno);
  }
  if (!S_ISREG(st.st_mode)) {
    throw Error(ErrorCode::io_error, fmt::format("{} {}: it is {}; vkgemm replaces only regular files, so name a "
                                                 "file instead",
                                                 who, path, kind_of(st.st_mode)));
  }
  if (::access(path.c_str(), W_OK) != 0) {
    throw Error(ErrorCode::io_error, fmt::format("{} {}: the file is read-only ({}); make it writable or name "
                                                 "another file",
                                                 who, path, std::strerror(errno)));
  }
  return {true, st.st_mode & 07777};
}

// A new file beside `path` under a name no other writer uses: open with O_EXCL | O_NOFOLLOW, so that
// nothing already there (a planted file or symlink) is ever opened. Returns its descriptor and name.
std::pair<int, std::string> create_beside(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  thread_local std::mt19937_64 random{std::random_device{}()};
  const std::string folder = folder_of(path);
  const std::string base = std::filesystem::path(path).filename().string();
  for (int attempt = 0;; ++attempt) {
    const std::string name = fmt::format("{}/.{}.{}-{}-{:016x}.tmp", folder, base, ::getpid(), counter++, random());
    const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) return {fd, name};
    if (errno != EEXIST || attempt == 100) {
      fail(fmt::format("cannot create a file in the folder {} (to write {})", folder, path), errno);
    }
  }
}

void write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw errno == 0 ? ENOSPC : errno;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

void write_atomically(const std::string& path, std::initializer_list<std::string_view> parts) {
  const Destination dest = inspect(path, "cannot write");
  auto [fd, tmp] = create_beside(path);
  try {
    if (dest.exists && ::fchmod(fd, dest.mode) != 0) throw errno;
    for (const std::string_view part : parts) write_all(fd, part);
    if (::fsync(fd) != 0) throw errno;
    const int closing = fd;
    fd = -1;
    if (::close(closing) != 0) throw errno;
    if (::rename(tmp.c_str(), path.c_str()) != 0) throw errno;
  } catch (int error) {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    fail(fmt::format("cannot write {}", path), error);
  }
  // The rename itself reaches the disk with the folder's entry; a failure here loses nothing already read.
  if (const int dir = ::open(folder_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir >= 0) {
    (void)::fsync(dir);
    ::close(dir);
  }
}

void check_destination(const std::string& path, std::string_view option) {
  const std::string who(option);
  inspect(path, who);
  const std::string folder = folder_of(path);
  struct stat st {};
  if (::stat(folder.c_str(), &st) != 0) fail(fmt::format("{} {}: the folder {}", who, path, folder), errno);
  if (!S_ISDIR(st.st_mode)) {
    throw Error(ErrorCode::io_error, fmt::format("{} {}: {} is not a folder", who, path, folder));
  }
  try {
    auto [fd, probe] = create_beside(path);
    ::close(fd);
    ::unlink(probe.c_str());
  } catch (const Error& e) {
    throw Error(ErrorCode::io_error, fmt::format("{} {}: {}", who, path, e.what()));
  }
}

void check_distinct(const std::vector<std::pair<std::string, std::string>>& outputs) {
  const auto same = [](const std::string& a, const std::string& b) {
    std::error_code ec1, ec2;
    if (std::filesystem::weakly_canonical(a, ec1) == std::filesystem::weakly_canonical(b, ec2) && !ec1 && !ec2) {
      return true;
    }
    struct stat sa {}, sb {};
    return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
  };
  for (size_t i = 0; i < outputs.size(); ++i) {
    for (size_t j = i + 1; j < outputs.size(); ++j) {
      const auto& [first, a] = outputs[i];
      const auto& [second, b] = outputs[j];
      if (a.empty() || b.empty() || !same(a, b)) continue;
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("{} {} and {} {} name the same file: one would replace the other; give each its own "
                              "file",
                              first, a, second, b));
    }
  }
}

}  // namespace vkgemm::files
