// Measuring a ProfilerService's clock against this process's, as NTP does:
// round trips of a cheap call that neuronprof servers answer with their
// clock (Monitor with duration_ms 0; the time in kServerClockHeader).
#ifndef NEURONPROF_SRC_RPC_CLOCK_PROBE_H_
#define NEURONPROF_SRC_RPC_CLOCK_PROBE_H_

#include <grpcpp/channel.h>

#include <cstdint>
#include <optional>
#include <string>
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

// The largest offset taken as a clock's skew: a server's clock header is a
// peer's word, and an offset past this (a week) is a broken clock or a
// hostile server, not a host to align.
inline constexpr int64_t kMaxClockOffsetNs = int64_t{7} * 24 * 3600 * 1000000000;

// The offset (server minus client) from the sample with the shortest round
// trip: server - (send + receive) / 2, uncertain by half that round trip
// (the server read its clock somewhere in it). nullopt without a sample
// whose receive is not before its send, or when the offset lies beyond
// kMaxClockOffsetNs; then `*refused` (if given) says why, for a warning.
std::optional<xplane::ClockOffset> EstimateClockOffset(const std::vector<ClockSampleRtt>& samples,
                                                       std::string* refused = nullptr);

// How many round trips MeasureClockOffset takes when the server answers.
inline constexpr int kClockProbeSamples = 8;

// Probes the server behind `channel` (connected) kClockProbeSamples times,
// each within `timeout_ms`. nullopt when it does not answer with its
// clock (other ProfilerServices: UNIMPLEMENTED or anything else); the
// first such answer ends the probe. Never an error: a capture goes on
// without an offset; one refused as implausible is said in `*refused`.
std::optional<xplane::ClockOffset> MeasureClockOffset(grpc::Channel& channel, int64_t timeout_ms,
                                                      std::string* refused = nullptr);

}  // namespace rpc
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_RPC_CLOCK_PROBE_H_
