// What the three files of neuronprof::Capture share: one capture's state
// between its host threads (Run, HostJob), a host's profile as it arrived
// (ReceivedProfile), and the steps each file does for the others:
// capture_options.cc checks the options, capture_client.cc drives the
// Profile calls, capture_files.cc turns a response into the host's files.
// Internal to src/rpc.
#ifndef NEURONPROF_SRC_RPC_CAPTURE_RUN_H_
#define NEURONPROF_SRC_RPC_CAPTURE_RUN_H_

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "neuronprof/capture.h"
#include "proto/xplane.pb.h"
#include "src/rpc/response_scan.h"
#include "src/rpc/service_address.h"
#include "src/xplane/clock_offset.h"

namespace neuronprof {
namespace rpc {

using Clock = std::chrono::steady_clock;

inline int64_t MillisBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count();
}

inline int64_t MillisSince(Clock::time_point start) { return MillisBetween(start, Clock::now()); }

// Everything one Capture() call shares between its threads.
struct HostJob {
  ServiceAddress address;
  bool host_is_shared = false;
  HostCaptureResult result;
  // Progress, guarded by Run::mutex.
  HostCaptureState state = HostCaptureState::kConnecting;
  int attempt = 0;
  Clock::time_point window_start;
  int64_t response_bytes = 0;
};

struct Run {
  const CaptureOptions* options = nullptr;
  std::string run_dir;          // As reported: <logdir>/plugins/profile/<run>.
  std::string repository_root;  // Absolute <logdir>/plugins/profile, for servers.
  std::string session_id;       // The run name.
  Clock::time_point start;      // Of Capture().

  std::mutex mutex;
  std::condition_variable changed;
  std::vector<HostJob> jobs;
  // Reports taken when a host changed stage or finished, not delivered yet:
  // each stage is reported however short it was.
  std::deque<CaptureProgress> reports;
  size_t finished_count = 0;
  std::set<std::string> taken_names;  // Host names given out in run_dir.
  // Hosts reading, aligning and writing their profile now, at most
  // options->max_parallel_hosts; guarded by mutex, waited on with slot_freed.
  int busy_slots = 0;
  std::condition_variable slot_freed;
};

// A host's profile as it arrived: the XSpace's bytes in gRPC's slices when
// the response holds it (neuronprof's and TSL's servers with emit_xspace),
// else the XSpace parsed by ResponseSpace.
struct ReceivedProfile {
  std::vector<grpc::Slice> slices;  // Own the bytes `scanned` points into.
  ScannedResponse scanned;
  std::optional<tensorflow::profiler::XSpace> space;  // Set when the bytes could not be used.
  std::string saved_file;                             // Where the server saved it, if there.
};

// capture_options.cc

// `options` with each deprecated field's value under its current name.
CaptureOptions WithCurrentNames(CaptureOptions options);

// Checks every option; the parsed addresses when they are all good.
absl::StatusOr<std::vector<ServiceAddress>> CheckOptions(const CaptureOptions& options);

// capture_files.cc

// The profile in a successful Profile call's `buffer`.
absl::StatusOr<ReceivedProfile> ReadResponse(grpc::ByteBuffer& buffer, const Run& run,
                                             const ServiceAddress& address);

// Picks this host's unique file name prefix in the run folder.
std::string ClaimHostName(Run& run, const ScannedResponse& scanned, const HostJob& job);

// Removes a profile the server saved into the run folder itself, unless it
// is what this capture reports under that name.
void RemoveServerFile(Run& run, const std::string& file);

// Writes the host's files, its times put on this client's clock by
// `offset` (or recorded as unmeasured). A profile still in gRPC's bytes
// has only its Task Environment plane replaced (neuronprof's lines are
// relative to its start time) and is written as it came; the Chrome and
// Kineto traces are fed fragments of it as it is parsed.
absl::StatusOr<std::vector<std::string>> WriteHostFiles(
    const Run& run, ReceivedProfile& profile, const std::string& host,
    const ServiceAddress& address, const std::optional<xplane::ClockOffset>& offset,
    HostCaptureTimings& timings, Clock::time_point received);

}  // namespace rpc
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_RPC_CAPTURE_RUN_H_
