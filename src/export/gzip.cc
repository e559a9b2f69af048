#include "src/export/gzip.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "src/export/atomic_file.h"

namespace neuronprof {
namespace exporter {
namespace {

// RFC 1952: magic, deflate, no flags, no time, no extra flags, OS unix.
constexpr char kGzipHeader[10] = {'\x1f', '\x8b', 8, 0, 0, 0, 0, 0, 0, 3};

}  // namespace

struct GzipSink::Block {
  std::string input;
  std::unique_ptr<char[]> output;
  size_t output_capacity = 0;
  size_t output_size = 0;
  uLong crc = 0;
  bool last = false;
  bool done = false;
  absl::Status status;
};

// A raw deflate stream reused for block after block.
class GzipSink::Deflater {
 public:
  explicit Deflater(int level)
      : ok_(deflateInit2(&stream_, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK) {}
  ~Deflater() {
    if (ok_) deflateEnd(&stream_);
  }
  Deflater(const Deflater&) = delete;
  Deflater& operator=(const Deflater&) = delete;

  // Deflates block->input into block->output: a sync flush ends every
  // block on a byte boundary (so blocks concatenate), the last one ends
  // the deflate stream.
  void Run(Block* block) {
    if (!ok_ || deflateReset(&stream_) != Z_OK) {
      block->status = absl::InternalError("zlib deflateInit2 failed");
      return;
    }
    const std::string& input = block->input;
    block->crc = crc32(0, reinterpret_cast<const Bytef*>(input.data()),
                       static_cast<uInt>(input.size()));
    stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
    stream_.avail_in = static_cast<uInt>(input.size());
    size_t needed = deflateBound(&stream_, input.size()) + 16;
    block->output_size = 0;
    const int flush = block->last ? Z_FINISH : Z_SYNC_FLUSH;
    while (true) {
      if (block->output_capacity < needed) {
        auto grown = std::make_unique<char[]>(needed);
        std::copy_n(block->output.get(), block->output_size, grown.get());
        block->output = std::move(grown);
        block->output_capacity = needed;
      }
      stream_.next_out = reinterpret_cast<Bytef*>(block->output.get() + block->output_size);
      stream_.avail_out = static_cast<uInt>(block->output_capacity - block->output_size);
      const int result = deflate(&stream_, flush);
      block->output_size = block->output_capacity - stream_.avail_out;
      if (result == Z_STREAM_ERROR) {
        block->status = absl::InternalError("zlib deflate failed");
        return;
      }
      const bool complete = block->last ? result == Z_STREAM_END
                                        : stream_.avail_in == 0 && stream_.avail_out != 0;
      if (complete) return;
      needed = block->output_capacity * 2;
    }
  }

 private:
  z_stream stream_{};
  const bool ok_;
};

int GzipSink::DefaultThreads() {
  const unsigned cores = std::thread::hardware_concurrency();
  return cores <= 1 ? 0 : static_cast<int>(std::min(cores, 4u));
}

GzipSink::GzipSink(ByteSink* next, int level, int threads)
    : next_(next), level_(level), current_(std::make_unique<Block>()) {
  current_->input.reserve(kBlockBytes);
  if (threads <= 0) {
    inline_deflater_ = std::make_unique<Deflater>(level_);
    return;
  }
  max_in_flight_ = 2 * static_cast<size_t>(threads);
  for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

GzipSink::~GzipSink() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    changed_.notify_all();
  }
  for (std::thread& worker : workers_) worker.join();
}

absl::Status GzipSink::Append(std::string_view bytes) {
  while (!bytes.empty()) {
    const size_t take = std::min(kBlockBytes - current_->input.size(), bytes.size());
    current_->input.append(bytes.data(), take);
    bytes.remove_prefix(take);
    if (current_->input.size() == kBlockBytes) Submit(/*last=*/false);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  return status_;
}

absl::Status GzipSink::Finish() {
  if (finished_) {
    std::lock_guard<std::mutex> lock(mutex_);
    return status_;
  }
  finished_ = true;
  Submit(/*last=*/true);  // Even empty: it ends the deflate stream.
  {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return in_order_.empty(); });
    stopping_ = true;
    changed_.notify_all();
  }
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();
  std::lock_guard<std::mutex> lock(mutex_);
  if (status_.ok()) {
    char trailer[8];
    for (int i = 0; i < 4; ++i) {
      trailer[i] = static_cast<char>((crc_ >> (8 * i)) & 0xff);
      trailer[4 + i] = static_cast<char>((input_bytes_ >> (8 * i)) & 0xff);  // mod 2^32
    }
    status_ = next_->Append({trailer, sizeof(trailer)});
  }
  return status_;
}

void GzipSink::Submit(bool last) {
  std::unique_ptr<Block> block = std::move(current_);
  block->last = last;
  std::unique_lock<std::mutex> lock(mutex_);
  if (!status_.ok()) {
    block->input.clear();  // Nothing more is written; the block is reused.
    current_ = std::move(block);
    return;
  }
  if (inline_deflater_ != nullptr) {
    lock.unlock();
    inline_deflater_->Run(block.get());
    lock.lock();
    block->done = true;
    in_order_.push_back(std::move(block));
    WriteReady(lock);
  } else {
    changed_.wait(lock, [&] { return in_order_.size() < max_in_flight_; });
    todo_.push_back(block.get());
    in_order_.push_back(std::move(block));
    changed_.notify_all();
  }
  if (last) return;
  if (!free_.empty()) {
    current_ = std::move(free_.back());
    free_.pop_back();
  } else {
    current_ = std::make_unique<Block>();
    current_->input.reserve(kBlockBytes);
  }
}

void GzipSink::WorkerLoop() {
  Deflater deflater(level_);
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return stopping_ || !todo_.empty(); });
    if (stopping_) return;
    Block* block = todo_.front();
    todo_.pop_front();
    lock.unlock();
    deflater.Run(block);
    lock.lock();
    block->done = true;
    WriteReady(lock);
  }
}

void GzipSink::WriteReady(std::unique_lock<std::mutex>& lock) {
  if (writing_) return;  // The writer at work writes this block too.
  writing_ = true;
  while (!in_order_.empty() && in_order_.front()->done) {
    std::unique_ptr<Block> block = std::move(in_order_.front());
    in_order_.pop_front();
    if (status_.ok()) status_ = block->status;
    if (status_.ok()) {
      lock.unlock();
      absl::Status written;
      if (!header_written_) written = next_->Append({kGzipHeader, sizeof(kGzipHeader)});
      header_written_ = true;
      if (written.ok()) written = next_->Append({block->output.get(), block->output_size});
      lock.lock();
      if (status_.ok()) status_ = std::move(written);
      crc_ = crc32_combine(crc_, block->crc, static_cast<z_off_t>(block->input.size()));
      input_bytes_ += block->input.size();
    }
    block->input.clear();
    block->done = false;
    block->status = absl::OkStatus();
    free_.push_back(std::move(block));
    changed_.notify_all();
  }
  writing_ = false;
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

namespace {

// `write`'s bytes into `file` (gzipped when `name` ends in ".gz"), then
// committed; on error the temporary file goes with `file`.
absl::Status StreamInto(AtomicFile& file, const std::string& name,
                        const std::function<absl::Status(ByteSink*)>& write) {
  if (absl::EndsWith(name, ".gz")) {
    GzipSink gzip(&file);
    if (absl::Status s = write(&gzip); !s.ok()) return s;
    if (absl::Status s = gzip.Finish(); !s.ok()) return s;
  } else if (absl::Status s = write(&file); !s.ok()) {
    return s;
  }
  return file.Commit();
}

}  // namespace

absl::Status WriteFileStreamed(const std::string& path,
                               const std::function<absl::Status(ByteSink*)>& write) {
  auto file = AtomicFile::Open(path);
  if (!file.ok()) return file.status();
  return StreamInto(*file, path, write);
}

absl::Status WriteFileStreamedAt(int dir, const std::string& dir_path, const std::string& name,
                                 AtomicFile::Existing existing,
                                 const std::function<absl::Status(ByteSink*)>& write) {
  auto file = AtomicFile::OpenAt(dir, dir_path, name, existing);
  if (!file.ok()) return file.status();
  return StreamInto(*file, name, write);
}

}  // namespace exporter
}  // namespace neuronprof
