// A received XSpace's bytes handed to the trace writers in fragments
// (export/trace_stream.h's contract) as they are parsed, instead of parsed
// whole first: the capture client's Chrome and Kineto traces start while
// the bytes are still being read, the events of one fragment at a time
// are in memory (their objects reused from fragment to fragment: no
// allocation per event, no whole XSpace to free), and the writers' jobs
// work on events that are still in the cache.
#ifndef NEURONPROF_SRC_RPC_SPACE_FRAGMENTS_H_
#define NEURONPROF_SRC_RPC_SPACE_FRAGMENTS_H_

#include <functional>

#include "absl/status/status.h"
#include "proto/xplane.pb.h"
#include "src/rpc/response_scan.h"

namespace neuronprof {
namespace rpc {

// Events per fragment for the capture client: one of the Kineto writer's
// jobs, formatted on the calling thread while the next fragment is parsed
// (larger fragments measured slower: each is spread over job threads of
// its own with fresh text buffers).
inline constexpr int kCaptureFragmentEvents = 8 * 1024;

// Parses `xspace` (a serialized XSpace whose map entries are checked:
// ScannedResponse::xspace) fragment by fragment and calls `ready` with
// each: every fragment holds every plane (with its metadata and stats)
// and every line (with its fields), and the next at most `max_events`
// events, in the order of the planes, lines and events of the bytes. A
// space without events is one fragment. The next fragment is parsed on a
// thread of its own while `ready` runs (on the calling thread); a fragment
// is reused once `ready` returned. DataLoss when the bytes are not an XSpace (before any
// fragment: they are all read once first, without parsing the events),
// else `ready`'s first error, after which it is not called again.
absl::Status ForEachSpaceFragment(
    const BytePieces& xspace, int max_events,
    const std::function<absl::Status(const tensorflow::profiler::XSpace&)>& ready);

}  // namespace rpc
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_RPC_SPACE_FRAGMENTS_H_
