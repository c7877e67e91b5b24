#include "npy.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "vkgemm/error.hpp"
#include "vkgemm/files.hpp"

namespace vkgemm::npy {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// The longest header read: NumPy writes under 200 bytes; a longer claim is garbage, never allocated.
constexpr size_t kMaxHeaderBytes = 1 << 16;

[[noreturn]] void fail(const std::string& name, const std::string& what) {
  throw Error(ErrorCode::file_format, fmt::format("{}: {}", name, what));
}

// A tiny reader for the Python dict literal of the header: {'descr': '<f4', 'fortran_order': False,
// 'shape': (3, 2), }. It accepts exactly that grammar and names what it did not expect.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& name) : s_(text), name_(name) {}

  void parse(std::string& descr, std::optional<bool>& fortran, std::optional<std::vector<uint64_t>>& shape) {
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = string_literal();
      expect(':');
      if (key == "descr") {
        descr = string_literal();
      } else if (key == "fortran_order") {
        fortran = boolean();
      } else if (key == "shape") {
        shape = tuple();
      } else {
        fail(name_, fmt::format("unexpected header key '{}'", files::printable(key)));
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      skip_space();
      if (peek() != '}') fail(name_, "malformed header: expected ',' or '}'");
    }
  }

 private:
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) fail(name_, fmt::format("malformed header: expected '{}' at character {}", c, pos_));
    ++pos_;
  }
  std::string string_literal() {
    skip_space();
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail(name_, fmt::format("malformed header: expected a string at {}", pos_));
    const size_t end = s_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) fail(name_, "malformed header: unterminated string");
    std::string out(s_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return out;
  }
  bool boolean() {
    skip_space();
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail(name_, "malformed header: fortran_order is neither True nor False");
  }
  std::vector<uint64_t> tuple() {
    expect('(');
    std::vector<uint64_t> dims;
    while (true) {
      skip_space();
      if (peek() == ')') break;
      if (!std::isdigit(static_cast<unsigned char>(peek()))) fail(name_, "malformed header: bad shape");
      uint64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        const uint64_t digit = static_cast<uint64_t>(peek() - '0');
        if (v > (std::numeric_limits<uint64_t>::max() - digit) / 10) fail(name_, "shape dimension overflows");
        v = v * 10 + digit;
        ++pos_;
      }
      dims.push_back(v);
      skip_space();
      if (peek() == ',') ++pos_;
      else if (peek() != ')') fail(name_, "malformed header: bad shape");
    }
    ++pos_;
    return dims;
  }

  std::string_view s_;
  const std::string& name_;
  size_t pos_ = 0;
};

DataType parse_descr(const std::string& descr, const std::string& name) {
  if (descr.size() < 2) fail(name, fmt::format("unsupported dtype '{}'", files::printable(descr)));
  const char order = descr[0];
  const std::string kind = descr.substr(1);
  if (order == '>') {
    fail(name, fmt::format("big-endian dtype '{}' is not supported; save it little-endian", files::printable(descr)));
  }
  if (order != '<' && order != '=' && order != '|') {
    fail(name, fmt::format("unsupported dtype '{}'", files::printable(descr)));
  }
  if (kind == "f4") return DataType::f32;
  if (kind == "f8") return DataType::f64;
  if (kind == "i4") return DataType::i32;
  if (kind == "f2") return DataType::f16;
  // ml_dtypes' bfloat16: np.save writes its dtype.str, '<V2' (NumPy's character codes do not extend, so
  // ml_dtypes types are kind 'V'); a 2-byte void is read as bf16.
  if (kind == "V2") return DataType::bf16;
  if (kind == "i1") return DataType::i8;
  if (kind == "u1") return DataType::u8;
  fail(name, fmt::format("unsupported dtype '{}' (vkgemm reads float32 '<f4', float64 '<f8', int32 '<i4', "
                         "float16 '<f2', bfloat16 as ml_dtypes saves it '<V2', int8 '|i1' and uint8 '|u1')",
                         files::printable(descr)));
}

// The preamble: the magic, the version, the header's length. Returns where the header starts and its length,
// checked against the file's size (so nothing is allocated for a length the file cannot hold).
std::pair<size_t, size_t> parse_preamble(std::span<const std::byte> prefix, uint64_t file_size,
                                         const std::string& name) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(prefix.data());
  if (prefix.size() < kMagicSize + 2 || std::memcmp(bytes, kMagic, kMagicSize) != 0) {
    fail(name, "not a .npy file (bad magic: it should start with \\x93NUMPY)");
  }
  const unsigned major = bytes[6];
  size_t header_len = 0;
  size_t header_start = 0;
  if (major == 1) {
    if (prefix.size() < 10) fail(name, "truncated header");
    header_len = size_t{bytes[8]} | size_t{bytes[9]} << 8;
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (prefix.size() < 12) fail(name, "truncated header");
    header_len = size_t{bytes[8]} | size_t{bytes[9]} << 8 | size_t{bytes[10]} << 16 | size_t{bytes[11]} << 24;
    header_start = 12;
  } else {
    fail(name, fmt::format("unsupported .npy version {}.{}", major, unsigned{bytes[7]}));
  }
  if (header_len > file_size - header_start) {
    fail(name, fmt::format("truncated header: it claims {} bytes, the file has {} after the preamble", header_len,
                           file_size - header_start));
  }
  if (header_len > kMaxHeaderBytes) {
    fail(name, fmt::format("the header claims {} bytes; vkgemm reads headers of up to {} bytes", header_len,
                           kMaxHeaderBytes));
  }
  return {header_start, header_len};
}

// The header's array (without its data) and where the data starts, its size checked against the file's.
// `prefix` holds at least the preamble and the header.
std::pair<Array, size_t> parse_header(std::span<const std::byte> prefix, uint64_t file_size, const std::string& name) {
  const auto [header_start, header_len] = parse_preamble(prefix, file_size, name);
  const std::string_view header(reinterpret_cast<const char*>(prefix.data()) + header_start, header_len);
  std::string descr;
  std::optional<bool> fortran;
  std::optional<std::vector<uint64_t>> shape;
  HeaderParser(header, name).parse(descr, fortran, shape);
  if (descr.empty() || !fortran || !shape) fail(name, "header lacks 'descr', 'fortran_order' or 'shape'");

  Array out;
  out.type = parse_descr(descr, name);
  if (*fortran) fail(name, "Fortran-order arrays are not supported; save with numpy.ascontiguousarray first");
  if (shape->size() != 2 && shape->size() != 3) {
    fail(name, fmt::format("the array is {}-D; vkgemm takes 2-D matrices or 3-D batches (batch x rows x cols)",
                           shape->size()));
  }
  for (uint64_t d : *shape) {
    if (d > std::numeric_limits<uint32_t>::max()) fail(name, fmt::format("dimension {} exceeds 2^32-1", d));
  }
  out.batched = shape->size() == 3;
  const size_t first = out.batched ? 1 : 0;
  out.batch = out.batched ? static_cast<uint32_t>((*shape)[0]) : 1;
  out.rows = static_cast<uint32_t>((*shape)[first]);
  out.cols = static_cast<uint32_t>((*shape)[first + 1]);
  const std::string dims = out.batched ? fmt::format("{}x{}x{}", out.batch, out.rows, out.cols)
                                       : fmt::format("{}x{}", out.rows, out.cols);
  // Elements, then bytes, each step checked against 2^64 (3 dimensions below 2^32 can exceed it).
  const uint64_t es = element_size(out.type);
  uint64_t data_bytes = es;
  bool overflow = false;
  for (uint64_t d : {uint64_t{out.batch}, uint64_t{out.rows}, uint64_t{out.cols}}) {
    if (d != 0 && data_bytes > std::numeric_limits<uint64_t>::max() / d) overflow = true;
    data_bytes *= d;
  }
  const size_t data_start = header_start + header_len;
  const uint64_t available = file_size - data_start;
  if (overflow || data_bytes > available) {
    fail(name, fmt::format("truncated data: the header describes {} {} ({} bytes), the file holds {}", dims,
                           to_string(out.type), overflow ? std::string("over 2^64") : std::to_string(data_bytes),
                           available));
  }
  if (data_bytes < available) {
    fail(name, fmt::format("{} bytes of unexpected data after the {} array", available - data_bytes, dims));
  }
  return {std::move(out), data_start};
}

}  // namespace

Array parse(std::span<const std::byte> file, const std::string& name) {
  auto [out, data_start] = parse_header(file, file.size(), name);
  out.data.assign(file.begin() + static_cast<std::ptrdiff_t>(data_start), file.end());
  return std::move(out);
}

Array read(const std::string& path) {
  // A regular file only, read in steps each checked against its size: the preamble (the magic first), the
  // header, then the data the header describes, allocated only once the file is known to hold it.
  files::InputFile file(path);
  std::vector<std::byte> prefix(std::min<uint64_t>(file.size(), 12));
  file.read(prefix.data(), prefix.size());
  const size_t header_end = [&] {
    const auto [start, length] = parse_preamble(prefix, file.size(), path);
    return start + length;
  }();
  const size_t have = prefix.size();
  prefix.resize(header_end);
  if (header_end > have) file.read(prefix.data() + have, header_end - have);
  auto [out, data_start] = parse_header(prefix, file.size(), path);
  out.data.resize(file.size() - data_start);
  file.read(out.data.data(), out.data.size());
  return std::move(out);
}

namespace {

void write_shape(const std::string& path, DataType type, const std::string& shape, uint64_t elements, const void* data) {
  const char* descr = type == DataType::f32    ? "<f4"
                      : type == DataType::f64  ? "<f8"
                      : type == DataType::f16  ? "<f2"
                      : type == DataType::bf16 ? "<V2"  // as np.save writes ml_dtypes.bfloat16
                      : type == DataType::i8   ? "|i1"
                      : type == DataType::u8   ? "|u1"
                                               : "<i4";
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, shape);
  // Pad with spaces and a newline so the data starts on a 64-byte boundary, as NumPy does.
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  const auto len = static_cast<uint16_t>(header.size());
  const char preamble[10] = {kMagic[0], kMagic[1], kMagic[2], kMagic[3], kMagic[4], kMagic[5],
                             1, 0, static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  files::write_atomically(path, {std::string_view(preamble, sizeof preamble), header,
                                 std::string_view(static_cast<const char*>(data), elements * element_size(type))});
}

}  // namespace

void write(const std::string& path, DataType type, uint32_t rows, uint32_t cols, const void* data) {
  write_shape(path, type, fmt::format("{}, {}", rows, cols), uint64_t{rows} * cols, data);
}

void write(const std::string& path, DataType type, uint32_t batch, uint32_t rows, uint32_t cols, const void* data) {
  write_shape(path, type, fmt::format("{}, {}, {}", batch, rows, cols), uint64_t{batch} * rows * cols, data);
}

}  // namespace vkgemm::npy
