// Reading regular files only, their size known before anything is allocated (vkgemm/files.hpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "vkgemm/error.hpp"
#include "vkgemm/files.hpp"

namespace vkgemm::files {

InputFile::InputFile(const std::string& path) : path_(path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below like any other special file.
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd_ < 0) {
    throw Error(ErrorCode::io_error, fmt::format("{}: cannot open for reading: {}", path, std::strerror(errno)));
  }
  struct stat st {};
  std::string refused;
  if (::fstat(fd_, &st) != 0) {
    refused = fmt::format("{}: cannot inspect it: {}", path, std::strerror(errno));
  } else if (S_ISDIR(st.st_mode)) {
    refused = fmt::format("{}: is a directory, not a file", path);
  } else if (!S_ISREG(st.st_mode)) {
    refused = fmt::format("{}: is not a regular file (a device, FIFO or socket); vkgemm reads only regular files",
                          path);
  }
  if (!refused.empty()) {
    ::close(fd_);
    fd_ = -1;
    throw Error(ErrorCode::io_error, refused);
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::read(void* out, size_t bytes) {
  auto* to = static_cast<char*>(out);
  while (bytes > 0) {
    const ssize_t n = ::read(fd_, to, bytes);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) throw Error(ErrorCode::io_error, fmt::format("{}: read failed: {}", path_, std::strerror(errno)));
    if (n == 0) throw Error(ErrorCode::io_error, fmt::format("{}: the file ended early (did it shrink?)", path_));
    to += n;
    bytes -= static_cast<size_t>(n);
  }
}

std::string printable(std::string_view bytes) {
  std::string out;
  for (const char ch : bytes) {
    const auto u = static_cast<unsigned char>(ch);
    if (u >= 0x20 && u <= 0x7e && u != '\\') {
      out += ch;
    } else {
      out += fmt::format("\\x{:02x}", u);
    }
  }
  return out;
}

}  // namespace vkgemm::files
