#include "src/export/json_text.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "src/xplane/utf8.h"

namespace neuronprof {
namespace exporter {
namespace json {
namespace {

bool NeedsEscape(unsigned char c) { return c < 0x20 || c == '"' || c == '\\'; }

// Printable ASCII but the quote and the backslash: copied as it is. Names, shapes and
// argument values are mostly nothing else, so most strings take one pass.
constexpr std::array<bool, 256> PlainBytes() {
  std::array<bool, 256> plain{};
  for (int c = 0x20; c < 0x80; ++c) plain[c] = c != '"' && c != '\\';
  return plain;
}
constexpr std::array<bool, 256> kPlain = PlainBytes();

// Whether any of the 8 bytes of `word` is not plain: below 0x20, '"', '\\'
// or non-ASCII (the exact "has a byte less than n" and "has a zero byte"
// tests of Bit Twiddling Hacks).
bool AnyNotPlain(uint64_t word) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHighs = 0x8080808080808080ull;
  const auto has_zero = [](uint64_t v) { return (v - kOnes) & ~v & kHighs; };
  const uint64_t control = (word - kOnes * 0x20) & ~word & kHighs;
  return (control | has_zero(word ^ (kOnes * '"')) | has_zero(word ^ (kOnes * '\\')) |
          (word & kHighs)) != 0;
}

void AppendEscaped(fmt::memory_buffer& out, std::string_view text) {
  size_t plain = 0;
  // Eight bytes at a time, then byte by byte from the first word with a
  // byte that is not plain.
  for (uint64_t word; plain + 8 <= text.size(); plain += 8) {
    std::memcpy(&word, text.data() + plain, 8);
    if (AnyNotPlain(word)) break;
  }
  while (plain < text.size() && kPlain[static_cast<unsigned char>(text[plain])]) ++plain;
  if (plain == text.size()) {
    out.push_back('"');
    out.append(text.data(), text.data() + text.size());
    out.push_back('"');
    return;
  }
  std::string scratch;
  const std::string_view valid = utf8::Valid(text, &scratch);
  out.push_back('"');
  const char* run = valid.data();  // Start of bytes copied as they are.
  const char* const end = valid.data() + valid.size();
  for (const char* c = run; c != end; ++c) {
    if (!NeedsEscape(static_cast<unsigned char>(*c))) continue;
    out.append(run, c);
    run = c + 1;
    switch (*c) {
      case '"':
        out.append(std::string_view("\\\""));
        break;
      case '\\':
        out.append(std::string_view("\\\\"));
        break;
      case '\n':
        out.append(std::string_view("\\n"));
        break;
      case '\t':
        out.append(std::string_view("\\t"));
        break;
      case '\r':
        out.append(std::string_view("\\r"));
        break;
      default:
        fmt::format_to(fmt::appender(out), FMT_COMPILE("\\u{:04x}"),
                       static_cast<unsigned>(static_cast<unsigned char>(*c)));
    }
  }
  out.append(run, end);
  out.push_back('"');
}

}  // namespace

Writer::Writer(ByteSink* sink, size_t flush_bytes)
    : sink_(sink), flush_bytes_(flush_bytes > 0 ? flush_bytes : sink->PieceBytes()) {
  Reserve();
}

Writer::Writer(fmt::memory_buffer&& buffer)
    : sink_(nullptr), flush_bytes_(SIZE_MAX), buffer_(std::move(buffer)) {
  buffer_.clear();
}

void Writer::String(std::string_view text) { AppendEscaped(buffer_, text); }

void Writer::Double(double value) {
  if (!std::isfinite(value)) {
    Raw("null");
    return;
  }
  fmt::format_to(fmt::appender(buffer_), FMT_COMPILE("{}"), value);
}

void Writer::Micros(int64_t ns) {
  // Written in place: twice a million times per trace.
  char* at = Room(kMaxIntChars + 5);
  // The magnitude as unsigned: -INT64_MIN does not fit an int64.
  uint64_t magnitude = static_cast<uint64_t>(ns);
  if (ns < 0) {
    *at++ = '-';
    magnitude = 0 - magnitude;
  }
  const unsigned rest = static_cast<unsigned>(magnitude % 1000);
  at = fmt::format_to(at, FMT_COMPILE("{}"), magnitude / 1000);
  at[0] = '.';
  at[1] = static_cast<char>('0' + rest / 100);
  at[2] = static_cast<char>('0' + rest / 10 % 10);
  at[3] = static_cast<char>('0' + rest % 10);
  Commit(at + 4);
}

void Writer::Flush() {
  if (sink_ == nullptr) return;  // The text stays for text().
  if (status_.ok()) status_ = sink_->Append(std::string_view(buffer_.data(), buffer_.size()));
  buffer_.clear();
}

void Writer::FlushPieces() {
  if (sink_ == nullptr) return;
  if (!status_.ok()) {
    buffer_.clear();
    return;
  }
  status_ = sink_->AppendBuffer(&buffer_);
  Reserve();  // The sink may have left storage of its own.
}

void Writer::Reserve() {
  // Room for the last event past the flush mark, so the buffer rarely grows.
  buffer_.reserve(flush_bytes_ + flush_bytes_ / 4);
}

absl::Status Writer::Finish() {
  Flush();
  return status_;
}

std::string Escaped(std::string_view text) {
  fmt::memory_buffer out;
  AppendEscaped(out, text);
  return fmt::to_string(out);
}

}  // namespace json
}  // namespace exporter
}  // namespace neuronprof
