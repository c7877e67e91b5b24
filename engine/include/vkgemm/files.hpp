// Files vkgemm reads and writes, each the one way it is done: the library's tuning file and the program's
// outputs (--out, --json, --csv) and inputs (--a, --b, --c).
//
// Writing: a file is created beside its destination under a unique name (O_CREAT | O_EXCL | O_NOFOLLOW,
// so a planted file or symlink is never opened; mode 0666 less the umask, or the replaced file's mode),
// written, flushed and synced with every call checked, then renamed over the destination. A reader sees
// the old file or the new one, never a part; a failure (ENOSPC, EIO, ...) leaves the old file as it was
// and names the path and the reason. A destination that exists and is not a regular file (a directory, a
// device such as /dev/full, a FIFO, a symlink to one of those) is refused, never replaced, and so is a
// read-only one. A symlink to a regular file is replaced by the new file, never written through.
//
// Reading: only a regular file is opened (a FIFO is not waited on, /dev/zero not read); its size is known
// before anything is allocated, so a header's claims are checked against it first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vkgemm::files {

// Writes the concatenation of `parts` to `path` as above. Throws vkgemm::Error(io_error) naming the path
// and the reason.
void write_atomically(const std::string& path, std::initializer_list<std::string_view> parts);
inline void write_atomically(const std::string& path, std::string_view text) { write_atomically(path, {text}); }

// Throws vkgemm::Error(io_error) unless write_atomically could write `path` now: its folder exists and a file
// can be created there, and the path is not a special file, a folder or read-only. Called before any long work;
// `option` (e.g. "--out") starts the message.
void check_destination(const std::string& path, std::string_view option);

// Throws vkgemm::Error(invalid_argument) when two of these outputs, (option, path), name one file (the same
// path spelled two ways, through a symlink, or a hard link): one would silently replace the other.
void check_distinct(const std::vector<std::pair<std::string, std::string>>& outputs);

// A regular file opened for reading. Throws vkgemm::Error(io_error) naming the path when it cannot be opened
// or is not a regular file.
class InputFile {
 public:
  explicit InputFile(const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  uint64_t size() const noexcept { return size_; }  // bytes, as the file had when opened
  const std::string& path() const noexcept { return path_; }
  // Reads exactly `bytes` from the current position; throws vkgemm::Error(io_error) when the file ends first
  // (it shrank) or a read fails.
  void read(void* out, size_t bytes);

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string path_;
};

// `bytes` as printable ASCII: every other byte (a NUL, a control character, a byte above 0x7e) and the
// backslash as a \xNN escape, so that a message quoting a file's garbage is whole and readable.
std::string printable(std::string_view bytes);

}  // namespace vkgemm::files
