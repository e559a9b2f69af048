// The streaming gzip writer: one gzip stream from blocks deflated on worker
// threads (also run under TSan) or inline, read back by zlib.
#include <zlib.h>

#include <string>
#include <string_view>

#include <catch2/catch.hpp>

#include "src/export/byte_sink.h"
#include "src/export/gzip.h"

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

TEST_CASE("gzip: one stream of many blocks, on worker threads or inline, reads back whole") {
  const std::string small = "hello, profile";
  std::string large;  // Several 1 MiB blocks, the last one partial.
  const std::string& large_text = large;
  for (int i = 0; large.size() < 5 * exporter::GzipSink::kBlockBytes + 123; ++i) {
    large += std::to_string(i) + ",";
  }
  for (int threads : {0, 1, 3}) {
    INFO("threads " << threads);
    for (const std::string* data : {&small, &large_text}) {
      const std::string packed = Gzip(*data, threads);
      CHECK(static_cast<unsigned char>(packed[0]) == 0x1f);  // gzip magic
      CHECK(static_cast<unsigned char>(packed[1]) == 0x8b);
      auto unpacked = exporter::GzipDecompress(packed);
      REQUIRE(unpacked.ok());
      CHECK(*unpacked == *data);
      // One member: zlib's single-stream inflate (which checks the CRC and
      // length in the trailer) reads it all, as viewers that do not read
      // concatenated members do.
      std::string inflated(data->size() + 1, '\0');
      uLongf size = inflated.size();
      z_stream stream{};
      REQUIRE(inflateInit2(&stream, 15 + 16) == Z_OK);
      stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data()));
      stream.avail_in = static_cast<uInt>(packed.size());
      stream.next_out = reinterpret_cast<Bytef*>(inflated.data());
      stream.avail_out = static_cast<uInt>(size);
      CHECK(inflate(&stream, Z_FINISH) == Z_STREAM_END);
      CHECK(stream.avail_in == 0);
      CHECK(stream.total_out == data->size());
      inflateEnd(&stream);
    }
  }
  CHECK(Gzip(large, 2, 7777) == Gzip(large, 0, 1 << 20));  // Same bytes however fed.
  CHECK_FALSE(exporter::GzipDecompress("not gzip at all").ok());
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
