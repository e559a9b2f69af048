#include "src/collectors/torch/op_callbacks.h"

#include <ATen/record_function.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/jit/runtime/interpreter.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "neuronprof/internal/recorder.h"
#include "neuronprof/trace.h"
#include "src/collectors/torch/collectives.h"
#include "src/collectors/torch/input_format.h"
#include "src/collectors/torch/memory_reporter.h"
#include "src/xplane/schema.h"

namespace neuronprof {
namespace collectors {
namespace libtorch {
namespace {

// An op between its start and end callbacks. RecordFunction scopes nest on
// their thread, so a per-thread stack pairs starts with ends and the hot
// path needs no ObserverContext allocation.
struct PendingOp {
  const char* name;  // Copied into the recorder's arena, with stats.
  uint64_t start_ticks;
  uint32_t state;  // Capture state at start; 0 = not recorded.
  uint32_t name_length;
  uint32_t args_offset;
  bool backward;  // Opened a backward region (see OnOpStart).
  bool enqueue;   // Pushed a collective's debug info (collectives.h).
  // The direction stat, one of the k* texts below (compared by address);
  // nested ops inherit a phase.
  std::string_view direction;
};

constexpr uint32_t kMaxDepth = 256;

struct ThreadOps {
  PendingOp stack[kMaxDepth];
  uint32_t depth = 0;
  uint32_t too_deep = 0;        // Starts past kMaxDepth still to be ended.
  uint32_t backward_depth = 0;  // Enclosing backward regions.
  // g_backward_epoch when this thread last ran an outermost op with grad
  // mode on (a forward, the loss, zero_grad): a later outermost no-grad op
  // after a backward is an optimizer update (see Direction).
  uint64_t forward_epoch = 0;
  InputScratch scratch;
};

// Allocated once per thread on its first op, freed at thread exit.
thread_local std::unique_ptr<ThreadOps> t_ops_owner;
__thread ThreadOps* t_ops = nullptr;

// Backward regions opened on any thread (CUDA backward runs on the
// engine's device threads, not the caller's).
std::atomic<uint64_t> g_backward_epoch{0};

ThreadOps* CurrentThreadOps() {
  if (t_ops == nullptr) {
    t_ops_owner = std::make_unique<ThreadOps>();
    t_ops = t_ops_owner.get();
    t_ops->forward_epoch = g_backward_epoch.load(std::memory_order_relaxed);
  }
  return t_ops;
}

std::atomic<bool> g_record_shapes{false};
std::atomic<bool> g_record_stacks{false};
std::atomic<uint64_t> g_skipped{0};
std::mutex g_handle_mutex;
at::CallbackHandle g_handle = 0;
at::CallbackHandle g_work_handle = 0;  // USER_SCOPE: c10d Work (collectives.h)

constexpr std::string_view kEngineWrapperPrefix = "autograd::engine::evaluate_function: ";

bool OpensBackwardRegion(const at::RecordFunction& fn, std::string_view name) {
  return fn.scope() == at::RecordScope::BACKWARD_FUNCTION ||
         name.substr(0, kEngineWrapperPrefix.size()) == kEngineWrapperPrefix;
}

constexpr std::string_view kFprop = "fprop";
constexpr std::string_view kBprop = "bprop";
constexpr std::string_view kLoss = "loss";
constexpr std::string_view kOptimizer = "optimizer";

// aten's loss functions: every "*_loss" op (mse_loss, cross_entropy_loss,
// nll_loss, smooth_l1_loss, ctc_loss, ...) and the three without the suffix.
// Their backward ops ("*_loss_backward") run in backward regions.
bool IsLossName(std::string_view name) {
  constexpr std::string_view kAten = "aten::";
  if (name.substr(0, kAten.size()) != kAten) return false;
  name.remove_prefix(kAten.size());
  constexpr std::string_view kSuffix = "_loss";
  if (name.size() > kSuffix.size() && name.substr(name.size() - kSuffix.size()) == kSuffix) {
    return true;
  }
  return name == "binary_cross_entropy" || name == "binary_cross_entropy_with_logits" ||
         name == "kl_div";
}

// The phase of the op just pushed on `ops`:
// - bprop inside the autograd engine;
// - an op nested in a loss or optimizer op shares its phase;
// - loss for aten's loss functions;
// - optimizer for an outermost op that runs with grad mode off after a
//   backward ran and before this thread's next outermost grad-mode op:
//   torch::optim's step() runs its updates under a NoGradGuard, and nothing
//   else in a training loop does. Inference under no_grad with no backward
//   since the thread's last grad-mode op stays fprop.
std::string_view Direction(ThreadOps* ops, std::string_view name, bool backward) {
  if (backward && ops->backward_depth == 1) {
    g_backward_epoch.fetch_add(1, std::memory_order_relaxed);
  }
  if (ops->backward_depth > 0) return kBprop;
  if (ops->depth > 1) {
    const std::string_view parent = ops->stack[ops->depth - 2].direction;
    if (parent.data() != kFprop.data()) return parent;
    return IsLossName(name) ? kLoss : kFprop;
  }
  const uint64_t epoch = g_backward_epoch.load(std::memory_order_relaxed);
  if (c10::GradMode::is_enabled()) {
    ops->forward_epoch = epoch;
  } else if (ops->forward_epoch != epoch) {
    return kOptimizer;
  }
  return IsLossName(name) ? kLoss : kFprop;
}

// The TorchScript frames the op runs in (innermost first, "function
// (file:line)" of the Python source the module was scripted from, as
// torch.profiler's with_stack shows them); "" outside the interpreter.
// Allocates: only with record_stacks, which says so. Never throws into
// libtorch's dispatcher: an op whose frames cannot be read has none.
std::string ScriptStack() noexcept try {
  const std::vector<torch::jit::StackEntry> entries = torch::jit::currentCallstack();
  std::string text;
  for (auto it = entries.begin(); it != entries.end(); ++it) {  // Innermost first.
    torch::jit::SourceRange range = it->range;
    if (auto original = range.findSourceRangeThatGenerated()) range = *original;
    if (!text.empty()) text += '\n';
    text += it->filename;
    if (const auto place = range.file_line_col()) {
      text += " (" + std::get<0>(*place) + ":" + std::to_string(std::get<1>(*place)) + ")";
    }
  }
  return text;
} catch (...) {
  return std::string();
}

// The name and the stats of an op with neither shapes, stacks nor a
// collective's arguments (most ops), as typed arguments: sized and copied
// inline, the same bytes as the TraceArg path of OnOpStart.
template <typename... A>
const char* CopyPlainOp(uint32_t state, std::string_view name, PendingOp* op, const A&... more) {
  return internal::CopyNameWithTypedArgs(state, name, &op->name_length, &op->args_offset,
                                         internal::TextArg{xplane::kOpFrameworkStat, "torch"},
                                         internal::TextArg{xplane::kOpDirectionStat, op->direction},
                                         more...);
}

const char* CopyPlainOp(uint32_t state, std::string_view name, PendingOp* op,
                        const at::RecordFunction& fn) {
  const int64_t sequence = fn.seqNr();
  const uint64_t forward_thread = op->backward ? fn.forwardThreadId() : 0;
  const internal::NumberArg sequence_arg = Arg(xplane::kOpSequenceStat, sequence);
  const internal::NumberArg forward_arg = Arg(xplane::kOpForwardThreadStat, forward_thread);
  if (sequence >= 0) {
    return forward_thread != 0 ? CopyPlainOp(state, name, op, sequence_arg, forward_arg)
                               : CopyPlainOp(state, name, op, sequence_arg);
  }
  return forward_thread != 0 ? CopyPlainOp(state, name, op, forward_arg)
                             : CopyPlainOp(state, name, op);
}

std::unique_ptr<at::ObserverContext> OnOpStart(const at::RecordFunction& fn) {
  EnsureMemoryReporterOnThisThread();
  ThreadOps* ops = CurrentThreadOps();
  if (ops->depth == kMaxDepth) {
    ++ops->too_deep;
    g_skipped.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  PendingOp& op = ops->stack[ops->depth++];
  const char* raw_name = fn.name();
  const std::string_view name(raw_name != nullptr ? raw_name : "");
  op.backward = OpensBackwardRegion(fn, name);
  if (op.backward) ++ops->backward_depth;
  op.direction = Direction(ops, name, op.backward);
  op.enqueue = false;
  op.state = internal::g_capture_state.load(std::memory_order_relaxed);
  if ((op.state & internal::kLevelMask) == 0) {
    op.state = 0;
    return nullptr;
  }
  const bool shapes = g_record_shapes.load(std::memory_order_relaxed);
  const bool stacks = g_record_stacks.load(std::memory_order_relaxed);
  const bool collective = !name.empty() && ((name[0] == 'r' && name == kParamCommsName) ||
                                            IsDispatcherCollective(name));
  if (!shapes && !stacks && !collective) {
    op.name = CopyPlainOp(op.state, name, &op, fn);
    if (op.name == nullptr) {
      op.state = 0;  // Window closed, buffer full or op too large (counted).
      return nullptr;
    }
    op.start_ticks = internal::NowTicks();
    return nullptr;
  }

  alignas(TraceArg) unsigned char storage[10 * sizeof(TraceArg)];
  auto* args = reinterpret_cast<TraceArg*>(storage);
  size_t count = 0;
  new (&args[count++]) TraceArg(xplane::kOpFrameworkStat, "torch");
  new (&args[count++]) TraceArg(xplane::kOpDirectionStat, op.direction);
  if (fn.seqNr() >= 0) {
    new (&args[count++]) TraceArg(xplane::kOpSequenceStat, fn.seqNr());
  }
  if (op.backward && fn.forwardThreadId() != 0) {
    new (&args[count++]) TraceArg(xplane::kOpForwardThreadStat, fn.forwardThreadId());
  }
  FormattedInputs inputs;
  if (shapes && fn.needsInputs() && FormatInputs(fn.inputs(), &ops->scratch, &inputs)) {
    new (&args[count++]) TraceArg(xplane::kOpInputDimsStat, inputs.dims);
    new (&args[count++]) TraceArg(xplane::kOpInputTypesStat, inputs.types);
    new (&args[count++]) TraceArg(xplane::kOpInputValuesStat, inputs.values);
  }
  uint64_t frames[internal::kMaxStackFrames];
  std::string script_stack;
  if (stacks) {
    script_stack = ScriptStack();
    if (!script_stack.empty()) {
      new (&args[count++]) TraceArg(internal::kScriptStackKey, script_stack);
    }
    const size_t depth = internal::CaptureStack(frames, internal::kMaxStackFrames);
    new (&args[count++])
        TraceArg(internal::kStackKey,
                 std::string_view(reinterpret_cast<const char*>(frames), depth * sizeof(uint64_t)));
  }
  // record_param_comms carries a collective's sizes in the thread's debug
  // info (collectives.h); one byte compare keeps other ops off this path.
  alignas(TraceArg) unsigned char comm_storage[kParamCommsArgs * sizeof(TraceArg)];
  auto* comm_args = reinterpret_cast<TraceArg*>(comm_storage);
  size_t comm_count = 0;
  if (!name.empty() && name[0] == 'r' && name == kParamCommsName) {
    comm_count = AddParamCommsArgs(comm_args);
  } else if (IsDispatcherCollective(name)) {
    comm_count = BeginEnqueue(comm_args);
    op.enqueue = true;
  }
  op.name = internal::CopyNameWithArgs(op.state, name, args, count, comm_args, comm_count,
                                       &op.name_length, &op.args_offset);
  if (op.name == nullptr) {
    op.state = 0;  // Window closed, buffer full or op too large (counted).
    return nullptr;
  }
  op.start_ticks = internal::NowTicks();
  return nullptr;
}

void OnOpEnd(const at::RecordFunction& /*fn*/, at::ObserverContext* /*ctx*/) {
  const uint64_t end_ticks = internal::NowTicks();
  ThreadOps* ops = t_ops;
  if (ops == nullptr) return;
  if (ops->too_deep > 0) {
    --ops->too_deep;
    return;
  }
  if (ops->depth == 0) return;
  const PendingOp& op = ops->stack[--ops->depth];
  if (op.backward) --ops->backward_depth;
  if (op.enqueue) EndEnqueue();
  if (op.state == 0) return;
  internal::RecordEvent(op.state, op.name, op.name_length, op.args_offset, op.start_ticks,
                        end_ticks);
}

}  // namespace

absl::Status AddOperatorCallbacks(bool record_shapes, int world_size, bool record_stacks) {
  std::lock_guard<std::mutex> lock(g_handle_mutex);
  if (g_handle != 0) {
    return absl::FailedPreconditionError("libtorch operator callbacks are already added");
  }
  g_record_shapes.store(record_shapes, std::memory_order_relaxed);
  g_record_stacks.store(record_stacks, std::memory_order_relaxed);
  at::RecordFunctionCallback callback(&OnOpStart, &OnOpEnd);
  // TORCHSCRIPT_FUNCTION: a scripted module's methods ("forward"), which
  // torch.profiler lists as well (docs/OPERATORS.md).
  callback.needsInputs(record_shapes)
      .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION,
               at::RecordScope::TORCHSCRIPT_FUNCTION});
  g_handle = at::addGlobalCallback(callback);
  // c10d Work objects (collectives): their own callbacks, so that ordinary
  // operators' callback list is unchanged; inputs give the message sizes.
  SetCollectiveWorldSize(world_size);
  at::RecordFunctionCallback work_callback(&OnWorkStart, &OnWorkEnd);
  work_callback.needsInputs(true).scopes({at::RecordScope::USER_SCOPE});
  g_work_handle = at::addGlobalCallback(work_callback);
  return absl::OkStatus();
}

void RemoveOperatorCallbacks() {
  std::lock_guard<std::mutex> lock(g_handle_mutex);
  if (g_handle == 0) return;
  at::removeCallback(g_handle);
  g_handle = 0;
  if (g_work_handle != 0) at::removeCallback(g_work_handle);
  g_work_handle = 0;
}

std::string_view CurrentOperatorName() {
  const ThreadOps* ops = t_ops;
  if (ops == nullptr) return {};
  for (uint32_t i = ops->depth; i-- > 0;) {
    const PendingOp& op = ops->stack[i];
    if (op.state == 0) continue;  // Not recorded: its name was not copied.
    // The copy holds the name, then its encoded arguments (event_args.h).
    return std::string_view(op.name, op.args_offset > 0 ? op.args_offset - 1 : op.name_length);
  }
  return {};
}

uint64_t TakeSkippedOperatorCount() { return g_skipped.exchange(0, std::memory_order_relaxed); }

}  // namespace libtorch
}  // namespace collectors
}  // namespace neuronprof
