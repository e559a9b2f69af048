#include "src/collectors/cupti/cupti_collector.h"

#include <cupti.h>

#include <atomic>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/collectors/cupti/activity_translator.h"
#include "src/collectors/cupti/driver_properties.h"

namespace neuronprof {
namespace cupti {
namespace {

// Reached from CUPTI's callbacks, which carry no user pointer. The pool
// outlives every capture (see PreparePool), so a late callback never
// touches freed memory.
std::atomic<ActivityBufferPool*> g_pool{nullptr};
std::atomic<uint64_t> g_dropped{0};

void CUPTIAPI OnBufferRequested(uint8_t** buffer, size_t* size, size_t* max_num_records) {
  ActivityBufferPool* pool = g_pool.load(std::memory_order_acquire);
  uint8_t* claimed = pool != nullptr ? pool->Acquire() : nullptr;
  *buffer = claimed;
  *size = claimed != nullptr ? pool->buffer_bytes() : 0;
  *max_num_records = 0;  // As many as fit.
}

void CUPTIAPI OnBufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                size_t /*size*/, size_t valid_size) {
  if (buffer != nullptr) {
    if (ActivityBufferPool* pool = g_pool.load(std::memory_order_acquire)) {
      pool->Complete(buffer, valid_size);
    }
  }
  // CUPTI counts what it could not store per context and stream.
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS &&
      dropped > 0) {
    g_dropped.fetch_add(dropped, std::memory_order_relaxed);
  }
}

std::string_view KindName(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return "CONCURRENT_KERNEL";
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return "MEMCPY";
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      return "MEMCPY2";
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return "MEMSET";
    case CUPTI_ACTIVITY_KIND_MEMORY2:
      return "MEMORY2";
    case CUPTI_ACTIVITY_KIND_RUNTIME:
      return "RUNTIME";
    case CUPTI_ACTIVITY_KIND_DRIVER:
      return "DRIVER";
    default:
      return "activity";
  }
}

std::string ResultText(CUptiResult result) {
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr) {
    return absl::StrCat("CUptiResult ", static_cast<int>(result));
  }
  return text;
}

absl::Status CuptiError(std::string_view what, CUptiResult result) {
  return absl::FailedPreconditionError(
      absl::StrCat("CUPTI ", std::string(what), " failed: ", ResultText(result),
                   " (is an NVIDIA GPU visible to this process, and is no other "
                   "profiler such as nsys or ncu attached?)"));
}

}  // namespace

absl::Status ValidateCuptiOptions(const CuptiOptions& options) {
  constexpr size_t kMinBuffer = size_t{64} << 10;
  constexpr size_t kMaxBuffer = size_t{1} << 30;
  if (options.buffer_bytes < kMinBuffer || options.buffer_bytes > kMaxBuffer ||
      options.buffer_bytes % ActivityBufferPool::kAlignment != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("CuptiOptions.buffer_bytes must be a multiple of 8 in [65536, ", kMaxBuffer,
                     "]; got ", options.buffer_bytes));
  }
  if (options.max_buffers < 1 || options.max_buffers > 4096) {
    return absl::InvalidArgumentError(
        absl::StrCat("CuptiOptions.max_buffers must be in [1, 4096]; got ", options.max_buffers));
  }
  return absl::OkStatus();
}

CuptiTracer& CuptiTracer::Get() {
  // Never destroyed: CUPTI's threads may call back during process exit.
  static CuptiTracer* tracer = new CuptiTracer();
  return *tracer;
}

bool CuptiTracer::active() const {
  std::lock_guard<std::mutex> lock(mu_);
  return active_;
}

std::vector<CUpti_ActivityKind> CuptiTracer::enabled_kinds() const {
  std::lock_guard<std::mutex> lock(mu_);
  return enabled_;
}

std::optional<CuptiTracer::ClockPair> CuptiTracer::ReadClocks() {
  // The host reading is the midpoint of two around CUPTI's.
  const int64_t before = HostEpochNowNs();
  uint64_t cupti_ns = 0;
  if (cuptiGetTimestamp(&cupti_ns) != CUPTI_SUCCESS) return std::nullopt;
  const int64_t after = HostEpochNowNs();
  return ClockPair{cupti_ns, before + (after - before) / 2};
}

absl::Status CuptiTracer::PreparePool(const CuptiOptions& options) {
  const bool same_shape = pool_ != nullptr && pool_->buffer_bytes() == options.buffer_bytes &&
                          pool_->count() == options.max_buffers;
  // A buffer CUPTI asked for after the last capture's flushes (a call that
  // straddled its Stop) comes back now, while every kind is disabled, so
  // the pool can be reused rather than leaked; else CUPTI would later
  // return that buffer, full of this capture's records, to the new pool.
  if (pool_ != nullptr && pool_->Outstanding() > 0) {
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  }
  if (same_shape && pool_->Outstanding() == 0) {
    pool_->Reset();
    g_pool.store(pool_.get(), std::memory_order_release);
    return absl::OkStatus();
  }
  absl::StatusOr<std::unique_ptr<ActivityBufferPool>> pool =
      ActivityBufferPool::Create(options.buffer_bytes, options.max_buffers);
  if (!pool.ok()) return pool.status();
  // Callbacks see the new pool before the old one can go away.
  g_pool.store(pool->get(), std::memory_order_release);
  // CUPTI may still hold one of the old pool's buffers (it never returned
  // it): keep that mapping alive rather than risk a write into freed memory.
  if (pool_ != nullptr && pool_->Outstanding() > 0) {
    (void)pool_.release();
  }
  pool_ = std::move(*pool);
  return absl::OkStatus();
}

void CuptiTracer::DisableAll() {
  for (CUpti_ActivityKind kind : enabled_) cuptiActivityDisable(kind);
  enabled_.clear();
}

absl::Status CuptiTracer::Start(const CuptiOptions& options, const std::string& driver_library) {
  // Without a driver CUPTI only answers CUPTI_ERROR_UNKNOWN; say why. Checked
  // first: without a driver that is the answer, whatever else holds CUPTI.
  if (absl::Status status = CheckDriverPresent(driver_library); !status.ok()) {
    return status;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (active_) {
    return absl::FailedPreconditionError("CUPTI is already tracing another capture");
  }
  if (absl::Status status = ValidateCuptiOptions(options); !status.ok()) {
    return status;
  }
  if (absl::Status status = PreparePool(options); !status.ok()) return status;
  g_dropped.store(0, std::memory_order_relaxed);
  cupti_dropped_ = 0;
  clock_pairs_.clear();

  if (CUptiResult r = cuptiActivityRegisterCallbacks(OnBufferRequested, OnBufferCompleted);
      r != CUPTI_SUCCESS) {
    return CuptiError("cuptiActivityRegisterCallbacks", r);
  }
  // OS thread ids, as the host plane's lines use, for the launch lines.
  if (CUptiResult r = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
      r != CUPTI_SUCCESS) {
    return CuptiError("cuptiSetThreadIdType", r);
  }
  std::vector<CUpti_ActivityKind> kinds = {
      CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
      CUPTI_ACTIVITY_KIND_MEMCPY2,           CUPTI_ACTIVITY_KIND_MEMSET,
      CUPTI_ACTIVITY_KIND_MEMORY2,           CUPTI_ACTIVITY_KIND_RUNTIME};
  if (options.driver_api) kinds.push_back(CUPTI_ACTIVITY_KIND_DRIVER);
  for (CUpti_ActivityKind kind : kinds) {
    if (CUptiResult r = cuptiActivityEnable(kind); r != CUPTI_SUCCESS) {
      DisableAll();
      return CuptiError(absl::StrCat("enabling ", std::string(KindName(kind)), " activity"), r);
    }
    enabled_.push_back(kind);
  }
  if (std::optional<ClockPair> pair = ReadClocks()) {
    clock_pairs_.push_back(*pair);
  }
  active_ = true;
  flushed_ = false;
  return absl::OkStatus();
}

absl::Status CuptiTracer::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!active_) return absl::FailedPreconditionError("CUPTI is not tracing");
  if (std::optional<ClockPair> pair = ReadClocks()) {
    clock_pairs_.push_back(*pair);
  }
  // Forced: buffers come back even when not full, with finished records.
  const CUptiResult flushed = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  DisableAll();
  // Records written between the flush and the disable.
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS) {
    cupti_dropped_ += dropped;
  }
  active_ = false;
  if (flushed != CUPTI_SUCCESS) {
    return CuptiError("cuptiActivityFlushAll", flushed);
  }
  return absl::OkStatus();
}

absl::Status CuptiTracer::Flush(DeviceActivitySink& sink) {
  std::lock_guard<std::mutex> lock(mu_);
  if (active_) {
    return absl::FailedPreconditionError("CUPTI Flush called before Stop");
  }
  if (flushed_ || pool_ == nullptr) return absl::OkStatus();
  flushed_ = true;
  // A call on another thread that began before Stop() and returned after
  // its last flush wrote its record into a buffer CUPTI asked for later
  // (seen on an H200 under a busy loop): hand that back too. Every kind is
  // disabled, so nothing new is recorded meanwhile.
  if (pool_->Outstanding() > 0) {
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  }
  for (const ClockPair& pair : clock_pairs_) {
    sink.AddClockSync(pair.cupti_ns, pair.host_ns);
  }
  if (!gpus_.has_value()) {
    // Without the driver's limits kernels simply carry no occupancy.
    absl::StatusOr<std::map<int, GpuProperties>> gpus = ReadGpuProperties();
    gpus_ = gpus.ok() ? std::move(*gpus) : std::map<int, GpuProperties>();
  }

  ActivityTranslator translator(sink, *gpus_);
  uint64_t unreadable_buffers = 0;
  pool_->ForEachCompleted([&](uint8_t* data, size_t valid_bytes) {
    CUpti_Activity* record = nullptr;
    while (true) {
      const CUptiResult r = cuptiActivityGetNextRecord(data, valid_bytes, &record);
      if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) return;
      if (r != CUPTI_SUCCESS) {
        ++unreadable_buffers;
        return;
      }
      translator.Translate(*record);
    }
  });
  translator.Finish();

  cupti_dropped_ += g_dropped.exchange(0, std::memory_order_relaxed);
  if (cupti_dropped_ > 0) {
    sink.AddDropped(
        cupti_dropped_,
        absl::StrCat("CUPTI dropped records for lack of buffer space (", pool_->refused(),
                     " buffer requests refused; the pool holds ", pool_->count(), " x ",
                     pool_->buffer_bytes(), " bytes, see CuptiOptions)"));
  } else if (pool_->refused() > 0) {
    sink.AddDropped(pool_->refused(),
                    absl::StrCat("CUPTI buffer requests refused: all ", pool_->count(),
                                 " buffers were in use (see CuptiOptions.max_buffers)"));
  }
  if (pool_->rejected() > 0) {
    sink.AddDropped(pool_->rejected(),
                    "CUPTI buffers returned that this capture did not hand "
                    "out (an earlier capture's); their records are lost");
  }
  if (pool_->Outstanding() > 0) {
    sink.AddDropped(pool_->Outstanding(),
                    "CUPTI buffers not returned by cuptiActivityFlushAll; "
                    "their records are lost");
  }
  if (unreadable_buffers > 0) {
    sink.AddDropped(unreadable_buffers,
                    "CUPTI buffers with an unreadable record; the rest of "
                    "each buffer is lost");
  }
  for (int device_id : translator.devices_seen()) {
    auto gpu = gpus_->find(device_id);
    if (gpu != gpus_->end()) ReportGpuProperties(device_id, gpu->second, sink);
  }
  return absl::OkStatus();
}

CuptiCollector::~CuptiCollector() {
  if (started_) (void)CuptiTracer::Get().Stop();
}

absl::Status CuptiCollector::Start() {
  if (started_) return absl::FailedPreconditionError("CUPTI collector already started");
  absl::Status status = CuptiTracer::Get().Start(options_, driver_library_);
  started_ = status.ok();
  ran_ = ran_ || started_;
  return status;
}

absl::Status CuptiCollector::Stop() {
  if (!started_) return absl::FailedPreconditionError("CUPTI collector not started");
  started_ = false;
  return CuptiTracer::Get().Stop();
}

absl::Status CuptiCollector::Flush(DeviceActivitySink& sink) {
  if (started_) return absl::FailedPreconditionError("CUPTI Flush called before Stop");
  if (!ran_) return absl::OkStatus();
  ran_ = false;
  return CuptiTracer::Get().Flush(sink);
}

}  // namespace cupti
}  // namespace neuronprof
