#include "src/rpc/clock_probe.h"

#include <grpcpp/grpcpp.h>

#include <chrono>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "proto/profiler_service.grpc.pb.h"
#include "src/core/clock.h"
#include "src/xplane/saturating.h"

namespace neuronprof {
namespace rpc {

std::optional<xplane::ClockOffset> EstimateClockOffset(const std::vector<ClockSampleRtt>& samples,
                                                       std::string* refused) {
  const ClockSampleRtt* best = nullptr;
  for (const ClockSampleRtt& sample : samples) {
    if (sample.receive_ns < sample.send_ns) continue;  // The client's clock stepped back.
    if (best == nullptr || SaturatingSub(sample.receive_ns, sample.send_ns) <
                               SaturatingSub(best->receive_ns, best->send_ns)) {
      best = &sample;
    }
  }
  if (best == nullptr) return std::nullopt;
  const int64_t round_trip = SaturatingSub(best->receive_ns, best->send_ns);
  xplane::ClockOffset offset;
  // send + round_trip / 2 without overflowing send + receive; the server's
  // clock is its word, checked before it is used.
  offset.offset_ns = SaturatingSub(best->server_ns, SaturatingAdd(best->send_ns, round_trip / 2));
  offset.uncertainty_ns = round_trip / 2 + round_trip % 2;
  if (offset.offset_ns > kMaxClockOffsetNs || offset.offset_ns < -kMaxClockOffsetNs) {
    if (refused != nullptr) {
      *refused = absl::StrCat(
          "the server's clock (", best->server_ns, " ns since the epoch) is ",
          offset.offset_ns / 1000000, " ms from this host's, beyond any plausible skew (",
          kMaxClockOffsetNs / 1000000, " ms): its times stay on its own clock, not aligned");
    }
    return std::nullopt;
  }
  return offset;
}

std::optional<xplane::ClockOffset> MeasureClockOffset(grpc::Channel& channel, int64_t timeout_ms,
                                                      std::string* refused) {
  // The channel is shared with the capture: a stub on it costs nothing.
  tensorflow::ProfilerService::Stub stub(
      std::shared_ptr<grpc::ChannelInterface>(&channel, [](grpc::ChannelInterface*) {}));
  std::vector<ClockSampleRtt> samples;
  for (int i = 0; i < kClockProbeSamples; ++i) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
    tensorflow::MonitorRequest request;  // duration_ms 0: the clock, at once.
    tensorflow::MonitorResponse response;
    ClockSampleRtt sample;
    sample.send_ns = core::EpochNowNs();
    const grpc::Status status = stub.Monitor(&context, request, &response);
    sample.receive_ns = core::EpochNowNs();
    if (!status.ok()) return std::nullopt;
    const auto& headers = context.GetServerInitialMetadata();
    auto it = headers.find(kServerClockHeader);
    if (it == headers.end() ||
        !absl::SimpleAtoi(absl::string_view(it->second.data(), it->second.size()),
                          &sample.server_ns)) {
      return std::nullopt;  // Answered, but not with a clock.
    }
    samples.push_back(sample);
  }
  return EstimateClockOffset(samples, refused);
}

}  // namespace rpc
}  // namespace neuronprof
