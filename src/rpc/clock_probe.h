// Measuring a ProfilerService's clock against this process's, as NTP does:
// round trips of a cheap call that neuronprof servers answer with their
// clock (Monitor with duration_ms 0; the time in kServerClockHeader).
#ifndef NEURONPROF_SRC_RPC_CLOCK_PROBE_H_
#define NEURONPROF_SRC_RPC_CLOCK_PROBE_H_

#include <grpcpp/channel.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "src/xplane/clock_offset.h"

namespace neuronprof {
namespace rpc {

// Initial-metadata header of a neuronprof server's answer to Monitor with
// duration_ms 0: its clock (core::EpochNowNs, the time base of its
// profiles) in decimal ns since the epoch, read while answering.
inline constexpr char kServerClockHeader[] = "neuronprof-clock-ns";

// One round trip: the client's clock when it sent and received, the
// server's clock in between.
struct ClockSampleRtt {
  int64_t send_ns = 0;
  int64_t server_ns = 0;
  int64_t receive_ns = 0;
};

// The offset (server minus client) from the sample with the shortest round
// trip: server - (send + receive) / 2, uncertain by half that round trip
// (the server read its clock somewhere in it). nullopt without a sample
// whose receive is not before its send.
std::optional<xplane::ClockOffset> EstimateClockOffset(const std::vector<ClockSampleRtt>& samples);

// How many round trips MeasureClockOffset takes when the server answers.
inline constexpr int kClockProbeSamples = 8;

// Probes the server behind `channel` (connected) kClockProbeSamples times,
// each within `timeout_ms`. nullopt when it does not answer with its
// clock (other ProfilerServices: UNIMPLEMENTED or anything else); the
// first such answer ends the probe. Never an error: a capture goes on
// without an offset.
std::optional<xplane::ClockOffset> MeasureClockOffset(grpc::Channel& channel, int64_t timeout_ms);

}  // namespace rpc
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_RPC_CLOCK_PROBE_H_
