// gzip (RFC 1952), streamed: bytes are deflated as they come, on worker
// threads, and handed on in order, so no whole file is held in memory.
#ifndef NEURONPROF_SRC_EXPORT_GZIP_H_
#define NEURONPROF_SRC_EXPORT_GZIP_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "src/export/atomic_file.h"
#include "src/export/byte_sink.h"

namespace neuronprof {
namespace exporter {

// A gzip file into `next` (which must outlive it), as bgzip and mgzip write
// it: the input is cut into blocks of 1 MiB, each compressed by ISA-L's
// igzip at `level` (0 = fastest .. 3 = smallest) into a gzip member of its
// own (RFC 1952 section 2.2: a file is a series of members), and the
// members are written in order. igzip level 1 takes a third of libdeflate
// level 1's time (a sixth of zlib's) for a file ~6 % larger than
// libdeflate's, ~2 % smaller than zlib's; a member per block keeps the
// blocks independent. Text prepared ahead (Prepare, on the thread that
// formatted it) is compressed there into members of its own, cut the same
// way from its first byte; AppendPrepared ends the block being filled (a
// shorter member) and writes them after it. The same bytes in the same
// pieces give the same file out, on any number of threads, in any process.
// Readers that read every member (gzip, zlib's gzread, Python's gzip, the
// PyTorch plugin, HTA, Perfetto's trace processor) read the whole file.
// With `threads` > 0 the blocks are compressed on that many threads while
// the caller goes on (at most 2 blocks per thread queued, so memory stays
// bounded); with 0, on the caller's thread. Finish() writes the rest.
class GzipSink : public ByteSink {
 public:
  static constexpr size_t kBlockBytes = size_t{1} << 20;
  // One thread per core, at most 4; none on one core.
  static int DefaultThreads();

  explicit GzipSink(ByteSink* next, int level = 1, int threads = DefaultThreads());
  GzipSink(const GzipSink&) = delete;
  GzipSink& operator=(const GzipSink&) = delete;
  ~GzipSink() override;  // Without Finish(), what is queued is dropped.

  absl::Status Append(std::string_view bytes) override;
  // A buffer that fills a block from its start becomes that block without
  // a copy, what it holds past the block left in it; else Append. The same
  // file as Append of the same bytes (json::Writer flushes whole blocks).
  absl::Status AppendBuffer(fmt::memory_buffer* buffer) override;
  size_t PieceBytes() const override { return kBlockBytes; }
  // `text` as whole members, compressed on the calling thread.
  void Prepare(std::string_view text, PreparedBytes* prepared) const override;
  absl::Status AppendPrepared(const PreparedBytes& prepared) override;
  // Compresses and writes what is left; the first error of the compressor
  // or `next`.
  absl::Status Finish();

 private:
  struct Block;
  class Compressor;

  void Submit(bool last);
  void WorkerLoop();
  // Writes the finished blocks at the front, in order (one writer at a time).
  void WriteReady(std::unique_lock<std::mutex>& lock);

  ByteSink* const next_;
  const int level_;
  std::unique_ptr<Block> current_;                 // Being filled by Append.
  std::unique_ptr<Compressor> inline_compressor_;  // When there are no workers.
  // Compressors of Prepare's callers, reused.
  mutable std::mutex spare_mutex_;
  mutable std::vector<std::unique_ptr<Compressor>> spare_compressors_;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::unique_ptr<Block>> in_order_;  // Submitted, not yet written.
  std::deque<Block*> todo_;                      // Not yet taken by a worker.
  std::vector<std::unique_ptr<Block>> free_;     // For reuse.
  size_t max_in_flight_ = 1;
  bool writing_ = false;
  bool stopping_ = false;
  bool finished_ = false;
  bool submitted_ = false;  // A block went to be compressed.
  absl::Status status_;
  std::vector<std::thread> workers_;
};

// Every member of a gzip file, inflated (tests and tools read traces back).
absl::StatusOr<std::string> GzipDecompress(std::string_view data);

// Writes `path` atomically (atomic_file.h) with the bytes `write` hands to
// its sink, gzipped on the way (GzipSink) when `path` ends in ".gz".
// Nothing is left under `path` when `write` or the file fails.
absl::Status WriteFileStreamed(const std::string& path,
                               const std::function<absl::Status(ByteSink*)>& write);
// The same for `name` (a plain file name) inside the open directory `dir`
// (AtomicFile::OpenAt: it never leaves that directory); with
// Existing::kRefuse an existing `name` is kept and the write fails with
// AlreadyExists naming it. `dir_path` is only for messages.
absl::Status WriteFileStreamedAt(int dir, const std::string& dir_path, const std::string& name,
                                 AtomicFile::Existing existing,
                                 const std::function<absl::Status(ByteSink*)>& write);

}  // namespace exporter
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_EXPORT_GZIP_H_
