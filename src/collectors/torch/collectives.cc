#include "src/collectors/torch/collectives.h"

#include <c10/core/ScalarType.h>
#include <c10/util/ThreadLocalDebugInfo.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <torch/csrc/distributed/c10d/ParamCommsUtils.hpp>

#include "neuronprof/internal/recorder.h"
#include "src/xplane/collective_bandwidth.h"
#include "src/xplane/collective_name.h"
#include "src/xplane/schema.h"

namespace neuronprof {
namespace collectors {
namespace libtorch {
namespace {

std::atomic<int> g_world_size{1};
std::atomic<int64_t> g_started{0};
std::atomic<int64_t> g_next_comm_id{1};
thread_local int64_t t_enqueued = 0;

// What an enqueue passes to its work, under PARAM_COMMS_INFO (the kind
// libtorch gives collectives' debug info): a ParamCommsDebugInfo, so that
// libtorch's own readers of that kind still read a valid (empty) one.
struct EnqueueInfo : torch::ParamCommsDebugInfo {
  int64_t comm_id = 0;
  int64_t seq = 0;
};

struct WorkContext : at::ObserverContext {
  std::string name;  // "gloo:all_reduce"
  size_t colon = 0;
  uint32_t state = 0;
  int64_t seq = 0;
  int64_t comm_id = 0;  // 0: no enqueue op to link to.
  int64_t bytes = 0;
  int64_t nelems = 0;
  int world_size = 1;
  c10::ScalarType dtype = c10::ScalarType::Undefined;
  std::chrono::steady_clock::time_point start_time;
  uint64_t start_ticks = 0;

  std::string_view backend() const { return std::string_view(name).substr(0, colon); }
  std::string_view collective() const { return std::string_view(name).substr(colon + 1); }
};

void AddTensor(const at::Tensor& tensor, WorkContext* ctx) {
  if (!tensor.defined()) return;
  ctx->nelems += static_cast<int64_t>(tensor.numel());
  ctx->bytes += static_cast<int64_t>(tensor.numel()) * static_cast<int64_t>(tensor.element_size());
  if (ctx->dtype == c10::ScalarType::Undefined) ctx->dtype = tensor.scalar_type();
}

// Fills args with the event's stats but bandwidth; returns the count (<= 8).
size_t CommonArgs(const WorkContext& ctx, TraceArg* args) {
  size_t count = 0;
  new (&args[count++]) TraceArg(xplane::kCollectiveStat, ctx.collective());
  new (&args[count++]) TraceArg(xplane::kCommBackendStat, ctx.backend());
  new (&args[count++]) TraceArg(xplane::kCommSeqStat, ctx.seq);
  if (ctx.comm_id != 0) new (&args[count++]) TraceArg(xplane::kCommIdStat, ctx.comm_id);
  new (&args[count++]) TraceArg(xplane::kCommBytesStat, ctx.bytes);
  new (&args[count++]) TraceArg(xplane::kCommNelemsStat, ctx.nelems);
  if (ctx.dtype != c10::ScalarType::Undefined) {
    new (&args[count++]) TraceArg(xplane::kCommDtypeStat, c10::toString(ctx.dtype));
  }
  new (&args[count++]) TraceArg(xplane::kWorldSizeStat, static_cast<int64_t>(ctx.world_size));
  return count;
}

void Record(uint32_t state, std::string_view name, const TraceArg* args, size_t count,
            uint64_t start_ticks, uint64_t end_ticks) {
  uint32_t length = 0;
  uint32_t args_offset = 0;
  const char* copy = internal::CopyName(state, name, args, count, &length, &args_offset);
  if (copy == nullptr) return;  // Window closed or buffer full (counted).
  internal::RecordEvent(state, copy, length, args_offset, start_ticks, end_ticks);
}

}  // namespace

void SetCollectiveWorldSize(int world_size) {
  g_world_size.store(world_size > 0 ? world_size : 1, std::memory_order_relaxed);
}

std::unique_ptr<at::ObserverContext> OnWorkStart(const at::RecordFunction& fn) {
  const char* raw_name = fn.name();
  if (raw_name == nullptr) return nullptr;
  const std::string_view name(raw_name);
  const size_t colon = name.find(':');
  if (colon == std::string_view::npos || !xplane::IsC10dBackend(name.substr(0, colon))) {
    return nullptr;
  }
  const uint32_t state = internal::g_capture_state.load(std::memory_order_relaxed);
  // Counted in and out of windows.
  int64_t seq = g_started.fetch_add(1, std::memory_order_relaxed);
  int64_t comm_id = 0;
  const auto* enqueue = dynamic_cast<const EnqueueInfo*>(
      c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PARAM_COMMS_INFO));
  if (enqueue != nullptr) {
    seq = enqueue->seq;
    comm_id = enqueue->comm_id;
  }
  if ((state & internal::kLevelMask) == 0) return nullptr;

  auto ctx = std::make_unique<WorkContext>();
  ctx->name = std::string(name);
  ctx->colon = colon;
  ctx->state = state;
  ctx->seq = seq;
  ctx->comm_id = comm_id;
  ctx->world_size = g_world_size.load(std::memory_order_relaxed);
  if (fn.needsInputs()) {
    for (const c10::IValue& input : fn.inputs()) {
      if (input.isTensor()) {
        AddTensor(input.toTensor(), ctx.get());
      } else if (input.isTensorList()) {
        for (const at::Tensor& tensor : input.toTensorVector()) AddTensor(tensor, ctx.get());
      }
    }
  }
  ctx->start_time = std::chrono::steady_clock::now();
  ctx->start_ticks = internal::NowTicks();
  return ctx;
}

void OnWorkEnd(const at::RecordFunction& /*fn*/, at::ObserverContext* observer) {
  if (observer == nullptr) return;
  const uint64_t end_ticks = internal::NowTicks();
  const auto end_time = std::chrono::steady_clock::now();
  const auto& ctx = *static_cast<const WorkContext*>(observer);
  alignas(TraceArg) unsigned char storage[11 * sizeof(TraceArg)];
  auto* args = reinterpret_cast<TraceArg*>(storage);
  size_t count = CommonArgs(ctx, args);
  const double seconds = std::chrono::duration<double>(end_time - ctx.start_time).count();
  if (ctx.bytes > 0 && seconds > 0) {
    const double algbw =
        xplane::AlgorithmBytes(ctx.collective(), static_cast<double>(ctx.bytes), ctx.world_size) /
        seconds / 1e9;
    new (&args[count++]) TraceArg(xplane::kAlgBandwidthStat, algbw);
    new (&args[count++])
        TraceArg(xplane::kBusBandwidthStat,
                 algbw * xplane::BusBandwidthFactor(ctx.collective(), ctx.world_size));
  }
  Record(ctx.state, ctx.name, args, count, ctx.start_ticks, end_ticks);
}

size_t BeginEnqueue(TraceArg* args) {
  auto info = std::make_shared<EnqueueInfo>();
  info->comm_id = g_next_comm_id.fetch_add(1, std::memory_order_relaxed);
  info->seq = t_enqueued++;
  new (&args[0]) TraceArg(xplane::kCommIdStat, info->comm_id);
  new (&args[1]) TraceArg(xplane::kCommSeqStat, info->seq);
  c10::ThreadLocalDebugInfo::_push(c10::DebugInfoKind::PARAM_COMMS_INFO, std::move(info));
  return kEnqueueArgs;
}

void EndEnqueue() { c10::ThreadLocalDebugInfo::_pop(c10::DebugInfoKind::PARAM_COMMS_INFO); }

size_t AddParamCommsArgs(TraceArg* args) {
  const auto* info = static_cast<const torch::ParamCommsDebugInfo*>(
      c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PARAM_COMMS_INFO));
  if (info == nullptr || dynamic_cast<const EnqueueInfo*>(info) != nullptr) return 0;
  // The column name is a temporary copy; keep it alive in a thread-local
  // buffer until the arguments are copied into the arena.
  thread_local std::string collective;
  collective = info->getColumnName();
  const int64_t item = static_cast<int64_t>(c10::elementSize(info->getDType()));
  size_t count = 0;
  new (&args[count++]) TraceArg(xplane::kCollectiveStat, std::string_view(collective));
  new (&args[count++])
      TraceArg(xplane::kCommBytesStat, static_cast<int64_t>(info->getInMessageSize()) * item);
  new (&args[count++])
      TraceArg(xplane::kCommOutBytesStat, static_cast<int64_t>(info->getOutMessageSize()) * item);
  new (&args[count++])
      TraceArg(xplane::kCommNelemsStat, static_cast<int64_t>(info->getInMessageSize()));
  new (&args[count++])
      TraceArg(xplane::kCommOutNelemsStat, static_cast<int64_t>(info->getOutMessageSize()));
  new (&args[count++]) TraceArg(xplane::kCommDtypeStat, c10::toString(info->getDType()));
  new (&args[count++]) TraceArg(xplane::kCommRankStat, static_cast<int64_t>(info->getRank()));
  new (&args[count++]) TraceArg(xplane::kWorldSizeStat,
                                static_cast<int64_t>(g_world_size.load(std::memory_order_relaxed)));
  return count;
}

}  // namespace libtorch
}  // namespace collectors
}  // namespace neuronprof
