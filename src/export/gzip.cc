#include "src/export/gzip.h"

#include <isa-l/igzip_lib.h>
#include <zlib.h>

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "src/export/atomic_file.h"

namespace neuronprof {
namespace exporter {
struct GzipSink::Block {
  fmt::memory_buffer input;
  std::unique_ptr<char[]> output;
  size_t output_capacity = 0;
  size_t output_size = 0;
  bool done = false;
  absl::Status status;
};

// An ISA-L (igzip) compressor reused for block after block.
class GzipSink::Compressor {
 public:
  explicit Compressor(int level)
      : level_(std::clamp(level, 0, ISAL_DEF_MAX_LEVEL)),
        level_buf_size_(LevelBufferBytes(level_)),
        level_buf_(std::make_unique<uint8_t[]>(level_buf_size_)) {}

  // Room for `input` as one member: incompressible input is stored (its
  // size, a stored block's header per 64 KiB, the gzip header and trailer).
  static size_t Bound(size_t input) { return input + input / 64 + 1024; }

  // block->input as one gzip member (header, deflate, CRC-32 and length)
  // into block->output.
  void Run(Block* block) {
    block->output_size = 0;
    const size_t bound = Bound(block->input.size());
    if (block->output_capacity < bound) {
      block->output = std::make_unique<char[]>(bound);
      block->output_capacity = bound;
    }
    block->status = Compress(std::string_view(block->input.data(), block->input.size()),
                             block->output.get(), block->output_capacity, &block->output_size);
  }

  // `input` as one member into `output` (Bound(input.size()) bytes at
  // least); its size in *written. The error names igzip's return code.
  absl::Status Compress(std::string_view input, char* output, size_t capacity, size_t* written) {
    isal_zstream stream{};  // Every field zero: the inits do not set them all.
    const int code = level_ == 0 ? Stateless(&stream, input, output, capacity)
                                 : InTwoCalls(&stream, input, output, capacity);
    *written = code == COMP_OK ? stream.total_out : 0;
    if (code == COMP_OK) return absl::OkStatus();
    if (code == kUnfinished) {
      return absl::InternalError(absl::StrCat("igzip compression of ", input.size(),
                                              " bytes did not end within ", capacity,
                                              " bytes of output"));
    }
    return absl::InternalError(absl::StrCat("igzip compression failed at level ", level_,
                                            ": isal_deflate returned ", code));
  }

 private:
  static constexpr size_t kFirstBytes = 17;
  // Not one of igzip's codes (COMP_OK 0, errors negative): all was
  // accepted, yet input was left or the member not finished.
  static constexpr int kUnfinished = 1;

  void Prepare(isal_zstream* stream, std::string_view input, char* output, size_t capacity) const {
    stream->level = static_cast<uint32_t>(level_);
    stream->level_buf = level_buf_.get();
    stream->level_buf_size = static_cast<uint32_t>(level_buf_size_);
    stream->gzip_flag = IGZIP_GZIP;
    stream->next_in = reinterpret_cast<uint8_t*>(const_cast<char*>(input.data()));
    stream->avail_in = static_cast<uint32_t>(input.size());
    stream->next_out = reinterpret_cast<uint8_t*>(output);
    stream->avail_out = static_cast<uint32_t>(capacity);
  }

  // Level 0's body hashes from the input alone; in one call, what does not
  // compress is stored.
  int Stateless(isal_zstream* stream, std::string_view input, char* output, size_t capacity) const {
    isal_deflate_stateless_init(stream);
    Prepare(stream, input, output, capacity);
    stream->end_of_stream = 1;
    stream->flush = NO_FLUSH;
    return isal_deflate_stateless(stream);
  }

  // Two calls, so that the bytes do not depend on where `stream` lies.
  // igzip's deflate body for levels 1 and 2 (x86 with SSE4.2 and up;
  // ISA-L 2.30, still so upstream in 2.32) starts a stream by hashing its
  // third byte from a register that holds `stream`'s address instead of the
  // input (.write_first_byte in igzip_icf_body_h1_gr_bt.asm), so another
  // thread's stack or another process can give other (valid) bytes. It
  // takes that path only at a stream's first byte and goes on from there
  // only when more than its 16-byte margin (when flushing) follows: fed the
  // first kFirstBytes alone and flushed, it stops right after that byte, and
  // the rest goes on from a correct history.
  int InTwoCalls(isal_zstream* stream, std::string_view input, char* output,
                 size_t capacity) const {
    isal_deflate_init(stream);
    Prepare(stream, input, output, capacity);
    const size_t first = std::min(input.size(), kFirstBytes);
    const bool more = first < input.size();
    const int code = Deflate(stream, first, more ? SYNC_FLUSH : NO_FLUSH, !more);
    if (code != COMP_OK || !more) return code;
    return Deflate(stream, input.size() - first, NO_FLUSH, true);
  }

  // `bytes` more of the input: COMP_OK when all of it was taken (and, at
  // the end, the member finished) within the output's room.
  static int Deflate(isal_zstream* stream, size_t bytes, int flush, bool end) {
    stream->avail_in = static_cast<uint32_t>(bytes);
    stream->flush = static_cast<uint16_t>(flush);
    stream->end_of_stream = end ? 1 : 0;
    const int code = isal_deflate(stream);
    if (code != COMP_OK) return code;
    const bool finished =
        stream->avail_in == 0 && (!end || stream->internal_state.state == ZSTATE_END);
    return finished ? COMP_OK : kUnfinished;
  }

  static size_t LevelBufferBytes(int level) {
    switch (level) {
      case 0:
        return ISAL_DEF_LVL0_DEFAULT;
      case 1:
        return ISAL_DEF_LVL1_DEFAULT;
      case 2:
        return ISAL_DEF_LVL2_DEFAULT;
      default:
        return ISAL_DEF_LVL3_DEFAULT;
    }
  }

  const int level_;
  const size_t level_buf_size_;
  std::unique_ptr<uint8_t[]> level_buf_;
};

int GzipSink::DefaultThreads() {
  const unsigned cores = std::thread::hardware_concurrency();
  return cores <= 1 ? 0 : static_cast<int>(std::min(cores, 4u));
}

GzipSink::GzipSink(ByteSink* next, int level, int threads)
    : next_(next), level_(level), current_(std::make_unique<Block>()) {
  current_->input.reserve(kBlockBytes);
  if (threads <= 0) {
    inline_compressor_ = std::make_unique<Compressor>(level_);
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
    current_->input.append(bytes.data(), bytes.data() + take);
    bytes.remove_prefix(take);
    if (current_->input.size() == kBlockBytes) Submit(/*last=*/false);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  return status_;
}

absl::Status GzipSink::AppendBuffer(fmt::memory_buffer* buffer) {
  if (current_->input.size() > 0 || buffer->size() < kBlockBytes) {
    absl::Status status = Append(std::string_view(buffer->data(), buffer->size()));
    buffer->clear();
    return status;
  }
  // The buffer's storage becomes the block and the block's (empty) goes
  // back, with what is past the block's end: the next block's start.
  std::swap(*buffer, current_->input);
  const char* rest = current_->input.data() + kBlockBytes;
  buffer->append(rest, current_->input.data() + current_->input.size());
  current_->input.resize(kBlockBytes);
  Submit(/*last=*/false);
  std::lock_guard<std::mutex> lock(mutex_);
  return status_;
}

absl::Status GzipSink::Finish() {
  if (finished_) {
    std::lock_guard<std::mutex> lock(mutex_);
    return status_;
  }
  finished_ = true;
  // The rest; for no bytes at all, one empty member (a gzip file is one at least).
  if (current_->input.size() > 0 || !submitted_) Submit(/*last=*/true);
  {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return in_order_.empty(); });
    stopping_ = true;
    changed_.notify_all();
  }
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();
  std::lock_guard<std::mutex> lock(mutex_);
  return status_;
}

void GzipSink::Prepare(std::string_view text, PreparedBytes* prepared) const {
  prepared->text = text;
  prepared->transformed = true;
  prepared->size = 0;
  prepared->status = absl::OkStatus();
  size_t bound = 0;
  for (size_t at = 0; at < text.size(); at += kBlockBytes) {
    bound += Compressor::Bound(std::min(kBlockBytes, text.size() - at));
  }
  if (prepared->capacity < bound) {
    // Not zeroed: only what is written is touched. Some room to spare,
    // so that a slightly longer text next time fits.
    prepared->capacity = bound + bound / 8;
    prepared->bytes.reset(new char[prepared->capacity]);
  }
  std::unique_ptr<Compressor> compressor;
  {
    std::lock_guard<std::mutex> lock(spare_mutex_);
    if (!spare_compressors_.empty()) {
      compressor = std::move(spare_compressors_.back());
      spare_compressors_.pop_back();
    }
  }
  if (compressor == nullptr) compressor = std::make_unique<Compressor>(level_);
  for (size_t at = 0; at < text.size(); at += kBlockBytes) {
    size_t written = 0;
    prepared->status =
        compressor->Compress(text.substr(at, kBlockBytes), prepared->bytes.get() + prepared->size,
                             prepared->capacity - prepared->size, &written);
    if (!prepared->status.ok()) break;
    prepared->size += written;
  }
  std::lock_guard<std::mutex> lock(spare_mutex_);
  spare_compressors_.push_back(std::move(compressor));
}

absl::Status GzipSink::AppendPrepared(const PreparedBytes& prepared) {
  if (!prepared.transformed) return Append(prepared.text);
  if (prepared.text.empty()) return Append({});
  // The block being filled goes first, as a member of its own.
  if (current_->input.size() > 0) Submit(/*last=*/false);
  std::unique_lock<std::mutex> lock(mutex_);
  if (status_.ok()) status_ = prepared.status;
  if (!status_.ok()) return status_;
  submitted_ = true;
  // Written once every block before them is (this is the only appender).
  changed_.wait(lock, [&] { return in_order_.empty() && !writing_; });
  writing_ = true;
  lock.unlock();
  absl::Status written = next_->Append({prepared.bytes.get(), prepared.size});
  lock.lock();
  writing_ = false;
  if (status_.ok()) status_ = std::move(written);
  return status_;
}

void GzipSink::Submit(bool last) {
  submitted_ = true;
  std::unique_ptr<Block> block = std::move(current_);
  std::unique_lock<std::mutex> lock(mutex_);
  if (!status_.ok()) {
    block->input.clear();  // Nothing more is written; the block is reused.
    current_ = std::move(block);
    return;
  }
  if (inline_compressor_ != nullptr) {
    lock.unlock();
    inline_compressor_->Run(block.get());
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
  Compressor compressor(level_);
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return stopping_ || !todo_.empty(); });
    if (stopping_) return;
    Block* block = todo_.front();
    todo_.pop_front();
    lock.unlock();
    compressor.Run(block);
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
      absl::Status written = next_->Append({block->output.get(), block->output_size});
      lock.lock();
      if (status_.ok()) status_ = std::move(written);
    }
    block->input.clear();
    block->done = false;
    block->status = absl::OkStatus();
    free_.push_back(std::move(block));
    changed_.notify_all();
  }
  writing_ = false;
  changed_.notify_all();  // AppendPrepared waits for the writing to end.
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
