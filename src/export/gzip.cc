#include "src/export/gzip.h"

#include <zlib.h>

#include <algorithm>
#include <future>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace neuronprof {
namespace exporter {
namespace {

absl::StatusOr<std::string> CompressMember(std::string_view data, int level) {
  z_stream stream{};
  // 15 window bits + 16 selects the gzip wrapper.
  if (deflateInit2(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    return absl::InternalError("zlib deflateInit2 failed");
  }
  std::string out;
  out.resize(deflateBound(&stream, data.size()));
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int result = deflate(&stream, Z_FINISH);
  deflateEnd(&stream);
  if (result != Z_STREAM_END) {
    return absl::InternalError(absl::StrCat("zlib deflate failed: ", result));
  }
  out.resize(stream.total_out);
  return out;
}

}  // namespace

absl::StatusOr<std::string> GzipCompress(std::string_view data, int level) {
  // Members stay well below zlib's 4 GiB uInt limit.
  constexpr size_t kMemberBytes = size_t{8} << 20;
  if (data.size() <= kMemberBytes) return CompressMember(data, level);
  std::vector<std::string_view> pieces;
  for (size_t offset = 0; offset < data.size(); offset += kMemberBytes) {
    pieces.push_back(data.substr(offset, kMemberBytes));
  }
  const size_t workers =
      std::max<size_t>(1, std::min<size_t>(std::thread::hardware_concurrency(), 8));
  std::vector<absl::StatusOr<std::string>> results(pieces.size());
  std::vector<std::thread> threads;
  std::atomic<size_t> next{0};
  for (size_t w = 0; w < std::min(workers, pieces.size()); ++w) {
    threads.emplace_back([&] {
      for (size_t i = next.fetch_add(1); i < pieces.size(); i = next.fetch_add(1)) {
        results[i] = CompressMember(pieces[i], level);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::string out;
  for (auto& result : results) {
    if (!result.ok()) return result.status();
    out += *result;
  }
  return out;
}

absl::StatusOr<std::string> GzipDecompress(std::string_view data) {
  std::string out;
  z_stream stream{};
  if (inflateInit2(&stream, 15 + 16) != Z_OK) {
    return absl::InternalError("zlib inflateInit2 failed");
  }
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  char buffer[1 << 16];
  while (true) {
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof(buffer);
    const int result = inflate(&stream, Z_NO_FLUSH);
    out.append(buffer, sizeof(buffer) - stream.avail_out);
    if (result == Z_STREAM_END) {
      if (stream.avail_in == 0) break;
      inflateReset(&stream);  // Next gzip member.
      continue;
    }
    if (result != Z_OK) {
      inflateEnd(&stream);
      return absl::DataLossError("not a valid gzip stream");
    }
  }
  inflateEnd(&stream);
  return out;
}

}  // namespace exporter
}  // namespace neuronprof
