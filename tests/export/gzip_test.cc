// The streaming gzip writer: a gzip member per block, compressed on worker
// threads (also run under TSan) or inline, read back by zlib.
#include "src/export/gzip.h"

#include <zlib.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "src/export/byte_sink.h"

namespace neuronprof {
namespace {

std::string Gzip(std::string_view data, int threads, size_t piece = 1 << 16) {
  exporter::StringSink out;
  exporter::GzipSink gzip(&out, /*level=*/1, threads);
  for (size_t at = 0; at < data.size(); at += piece) {
    REQUIRE(gzip.Append(data.substr(at, piece)).ok());
  }
  REQUIRE(gzip.Finish().ok());
  return out.text();
}

// The gzip members of `packed`, each inflated by zlib on its own (which
// checks its CRC-32 and length), concatenated; -1 members if one is bad.
std::pair<int, std::string> InflateMembers(std::string_view packed) {
  std::pair<int, std::string> result{0, ""};
  while (!packed.empty()) {
    z_stream stream{};
    REQUIRE(inflateInit2(&stream, 15 + 16) == Z_OK);
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data()));
    stream.avail_in = static_cast<uInt>(packed.size());
    char buffer[1 << 16];
    int code = Z_OK;
    while (code == Z_OK) {
      stream.next_out = reinterpret_cast<Bytef*>(buffer);
      stream.avail_out = sizeof(buffer);
      code = inflate(&stream, Z_NO_FLUSH);
      result.second.append(buffer, sizeof(buffer) - stream.avail_out);
    }
    packed.remove_prefix(packed.size() - stream.avail_in);
    inflateEnd(&stream);
    if (code != Z_STREAM_END) return {-1, ""};
    ++result.first;
  }
  return result;
}

TEST_CASE("gzip: a member per 1 MiB block, on worker threads or inline, reads back whole") {
  const std::string empty;
  const std::string small = "hello, profile";
  std::string large_text;  // Several 1 MiB blocks, the last one partial.
  for (int i = 0; large_text.size() < 5 * exporter::GzipSink::kBlockBytes + 123; ++i) {
    large_text += std::to_string(i) + ",";
  }
  const std::string& large = large_text;
  const std::string exact(2 * exporter::GzipSink::kBlockBytes, 'e');
  for (int threads : {0, 1, 3}) {
    INFO("threads " << threads);
    for (const std::string* data : {&empty, &small, &large, &exact}) {
      INFO("bytes " << data->size());
      const std::string packed = Gzip(*data, threads);
      CHECK(static_cast<unsigned char>(packed[0]) == 0x1f);  // gzip magic
      CHECK(static_cast<unsigned char>(packed[1]) == 0x8b);
      auto unpacked = exporter::GzipDecompress(packed);
      REQUIRE(unpacked.ok());
      CHECK(*unpacked == *data);
      // Members in order, one per block (a file of no bytes is one empty
      // member), each whole to zlib.
      const auto [members, inflated] = InflateMembers(packed);
      const size_t blocks =
          (data->size() + exporter::GzipSink::kBlockBytes - 1) / exporter::GzipSink::kBlockBytes;
      CHECK(members == static_cast<int>(std::max<size_t>(blocks, 1)));
      CHECK(inflated == *data);
    }
  }
  // Same bytes however fed, on worker threads or not.
  CHECK(Gzip(large, 2, 7777) == Gzip(large, 0, 1 << 20));
  CHECK_FALSE(exporter::GzipDecompress("not gzip at all").ok());
}

TEST_CASE("gzip: whole blocks handed as buffers are taken without a copy, the same file") {
  constexpr size_t kBlock = exporter::GzipSink::kBlockBytes;
  std::string text;  // 4 blocks and a bit, in "events" of up to 8 bytes.
  for (int i = 0; text.size() < 4 * kBlock + 999; ++i) text += std::to_string(i) + ",";
  for (int threads : {0, 2}) {
    INFO("threads " << threads);
    exporter::StringSink out;
    exporter::GzipSink gzip(&out, /*level=*/1, threads);
    REQUIRE(gzip.PieceBytes() == kBlock);
    // As json::Writer fills its buffer: whole events, handed over once it
    // holds a block (so a block ends inside an event), the rest at the end.
    fmt::memory_buffer buffer;
    int flushes = 0;
    int taken = 0;  // Flushes whose storage became a block.
    for (size_t at = 0; at < text.size();) {
      const size_t end = std::min(text.find(',', at) + 1, text.size());
      buffer.append(text.data() + at, text.data() + end);
      at = end;
      if (buffer.size() < kBlock) continue;
      const char* storage = buffer.data();
      const size_t past = buffer.size() - kBlock;
      REQUIRE(gzip.AppendBuffer(&buffer).ok());
      ++flushes;
      if (buffer.data() != storage) ++taken;
      CHECK(buffer.size() == past);  // The next block's start stays.
    }
    REQUIRE(gzip.Append(std::string_view(buffer.data(), buffer.size())).ok());
    REQUIRE(gzip.Finish().ok());
    CHECK(flushes == 4);
    CHECK(taken == 4);
    CHECK(out.text() == Gzip(text, 0, 4096));
  }
  // A block begun by Append: the buffer is appended whole, as by Append.
  exporter::StringSink out;
  exporter::GzipSink gzip(&out, /*level=*/1, /*threads=*/1);
  REQUIRE(gzip.Append("begun").ok());
  fmt::memory_buffer buffer;
  buffer.resize(kBlock + 5);
  std::fill(buffer.begin(), buffer.end(), 'b');
  REQUIRE(gzip.AppendBuffer(&buffer).ok());
  CHECK(buffer.size() == 0);
  REQUIRE(gzip.Finish().ok());
  CHECK(out.text() == Gzip("begun" + std::string(kBlock + 5, 'b'), 0));
}

// `data` gzipped inline `depth` frames of 64 KiB further down the stack,
// where the compressor's state then lives.
std::string GzipDeeper(std::string_view data, int depth) {
  if (depth == 0) return Gzip(data, 0);
  volatile char frame[1 << 16];
  frame[0] = 1;
  std::string packed = GzipDeeper(data, depth - 1);
  frame[1] = frame[0];  // The frame stays (no tail call).
  return packed;
}

TEST_CASE("gzip: the same bytes wherever the compressor's state lies") {
  // igzip's body once hashed a stream's third byte from the state's address
  // (gzip.cc): each of these short inputs compressed to other bytes at a
  // few of 32 such addresses (found by trying them).
  for (const char* data : {"bbababaaaaabbabaabab", "abaaaaabaabaaabbabbbabaababbbbaaaabab",
                           "babbabbbbbabaaabba", "bbaaabaababaaababbbbababbbbaa"}) {
    INFO(data);
    const std::string expected = Gzip(data, 0);
    REQUIRE(exporter::GzipDecompress(expected).value() == data);
    for (int depth = 1; depth <= 64; ++depth) {
      INFO("depth " << depth);
      REQUIRE(GzipDeeper(data, depth) == expected);
    }
  }
}

TEST_CASE("gzip: every level reads back, input that does not compress too") {
  std::string noise(2 * exporter::GzipSink::kBlockBytes + 99, '\0');
  uint64_t state = 88172645463325252u;  // xorshift64
  for (char& c : noise) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    c = static_cast<char>(state);
  }
  for (int level = 0; level <= 3; ++level) {
    INFO("level " << level);
    for (int threads : {0, 2}) {
      exporter::StringSink out;
      exporter::GzipSink gzip(&out, level, threads);
      REQUIRE(gzip.Append(noise).ok());
      REQUIRE(gzip.Finish().ok());
      CHECK(out.text().size() < noise.size() + noise.size() / 64 + 1024);
      CHECK(exporter::GzipDecompress(out.text()).value() == noise);
    }
  }
}

// `pieces` into a gzip file on `threads` workers: the odd ones appended, the
// even ones prepared (compressed) on threads of their own first, as a
// writer's jobs prepare their text.
std::string GzipPrepared(const std::vector<std::string>& pieces, int threads) {
  exporter::StringSink out;
  exporter::GzipSink gzip(&out, /*level=*/1, threads);
  std::vector<exporter::PreparedBytes> prepared(pieces.size());
  std::vector<std::thread> preparing;
  for (size_t i = 0; i < pieces.size(); i += 2) {
    preparing.emplace_back([&, i] { gzip.Prepare(pieces[i], &prepared[i]); });
  }
  for (std::thread& thread : preparing) thread.join();
  for (size_t i = 0; i < pieces.size(); ++i) {
    REQUIRE((i % 2 == 0 ? gzip.AppendPrepared(prepared[i]) : gzip.Append(pieces[i])).ok());
  }
  REQUIRE(gzip.Finish().ok());
  return out.text();
}

TEST_CASE("gzip: text prepared on other threads comes in order, in members of its own") {
  std::string numbers;  // 2.5 blocks: three members.
  for (int i = 0; numbers.size() < 5 * exporter::GzipSink::kBlockBytes / 2; ++i) {
    numbers += std::to_string(i) + ",";
  }
  const std::string filler(exporter::GzipSink::kBlockBytes + 5000, 'f');  // Two blocks.
  const std::vector<std::string> pieces = {"[head", numbers, filler, "", "mid", numbers + "]"};
  std::string whole;
  for (const std::string& piece : pieces) whole += piece;
  for (int threads : {0, 1, 3}) {
    INFO("threads " << threads);
    const std::string packed = GzipPrepared(pieces, threads);
    CHECK(exporter::GzipDecompress(packed).value() == whole);
    // "[head" (prepared): 1; numbers (appended): 2 full blocks, and the
    // half block being filled ends as a member of its own before the
    // filler: 1; the filler (prepared): 2; "" (appended): none; "mid"
    // (prepared): 1; numbers + "]" (appended): 3.
    const auto [members, inflated] = InflateMembers(packed);
    CHECK(members == 1 + 2 + 1 + 2 + 0 + 1 + 3);
    CHECK(inflated == whole);
    // The same bytes on any number of workers.
    CHECK(packed == GzipPrepared(pieces, 0));
  }
}

TEST_CASE("gzip: a sink that compresses nothing ahead appends prepared text as it is") {
  exporter::StringSink out;
  exporter::PreparedBytes prepared;
  out.Prepare("as is", &prepared);
  REQUIRE(out.Append("text ").ok());
  REQUIRE(out.AppendPrepared(prepared).ok());
  CHECK(out.text() == "text as is");
}

TEST_CASE("gzip: an error of the next sink comes back and stops the writing") {
  class FailingSink : public exporter::ByteSink {
   public:
    absl::Status Append(std::string_view /*bytes*/) override {
      ++calls;
      return absl::ResourceExhaustedError("disk full");
    }
    int calls = 0;
  };
  std::string large(3 * exporter::GzipSink::kBlockBytes, 'x');
  for (int threads : {0, 2}) {
    INFO("threads " << threads);
    FailingSink failing;
    exporter::GzipSink gzip(&failing, /*level=*/1, threads);
    absl::Status status;
    for (int i = 0; i < 4 && status.ok(); ++i) status = gzip.Append(large);
    if (status.ok()) status = gzip.Finish();
    CHECK(absl::IsResourceExhausted(status));
    CHECK(gzip.Finish().message() == "disk full");
    CHECK(failing.calls == 1);  // Nothing more after the first error.
  }
}

}  // namespace
}  // namespace neuronprof
