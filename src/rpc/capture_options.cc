// The checks of CaptureOptions that Capture() and ValidateCaptureOptions
// make before any host is contacted: addresses, names, each limit, and
// file names that fit.
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/export/logdir.h"
#include "src/rpc/capture_client.h"
#include "src/rpc/capture_run.h"

namespace neuronprof {
namespace rpc {
namespace {

absl::Status CheckRange(const char* field, int64_t value, int64_t low, int64_t high) {
  if (value >= low && value <= high) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("CaptureOptions::", field, " must be ", low, "..", high, ", got ", value));
}

absl::StatusOr<std::vector<ServiceAddress>> ParseAddresses(const CaptureOptions& options) {
  if (options.service_addresses.empty()) {
    return absl::InvalidArgumentError(
        "CaptureOptions::service_addresses is empty: give at least one host:port");
  }
  std::vector<ServiceAddress> parsed;
  std::set<std::string> seen;
  for (size_t i = 0; i < options.service_addresses.size(); ++i) {
    auto addresses = ParseServiceAddresses(options.service_addresses[i]);
    if (!addresses.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("CaptureOptions::service_addresses[", i,
                                                     "]: ", addresses.status().message()));
    }
    for (ServiceAddress& address : *addresses) {
      // Two calls to one server would collide: it runs one capture at a time.
      if (!seen.insert(address.Target()).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("CaptureOptions::service_addresses lists '", address.address, "' twice"));
      }
      parsed.push_back(std::move(address));
    }
  }
  return parsed;
}

}  // namespace

CaptureOptions WithCurrentNames(CaptureOptions options) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  if (options.write_kineto_trace) options.write_pytorch_trace = *options.write_kineto_trace;
  options.write_kineto_trace.reset();
#pragma GCC diagnostic pop
  return options;
}

absl::StatusOr<std::vector<ServiceAddress>> CheckOptions(const CaptureOptions& options) {
  auto addresses = ParseAddresses(options);
  if (!addresses.ok()) return addresses.status();
  if (options.logdir.empty()) {
    return absl::InvalidArgumentError("CaptureOptions::logdir must not be empty");
  }
  struct Range {
    const char* field;
    int64_t value, low, high;
  };
  const Range ranges[] = {
      {"duration_ms", options.duration_ms, 1, kMaxCaptureDurationMs},
      {"num_tracing_attempts", options.num_tracing_attempts, 1, kMaxTracingAttempts},
      {"host_tracer_level", options.host_tracer_level, 0, 3},
      {"device_tracer_level", options.device_tracer_level, 0, 2},
      {"python_tracer_level", options.python_tracer_level, 0, 1},
      {"connect_timeout_ms", options.connect_timeout_ms, 1, kMaxCaptureDurationMs},
      {"connect_attempts", options.connect_attempts, 1, kMaxConnectAttempts},
      {"response_timeout_ms", options.response_timeout_ms, 1, kMaxCaptureDurationMs},
      {"max_parallel_hosts", options.max_parallel_hosts, 1, kMaxParallelHosts},
  };
  for (const Range& range : ranges) {
    if (auto s = CheckRange(range.field, range.value, range.low, range.high); !s.ok()) {
      return s;
    }
  }
  if (!options.run_name.empty()) {
    if (auto s = exporter::CheckPlainName(options.run_name, "CaptureOptions::run_name"); !s.ok()) {
      return s;
    }
  }
  // Every host's files are named at worst <host>_<port><suffix>: refuse
  // now what could only fail after the whole capture.
  const std::string_view suffix = LongestFileSuffix(options);
  for (size_t i = 0; i < addresses->size(); ++i) {
    const std::string name = AddressHostName((*addresses)[i]);
    if (name.size() + suffix.size() > exporter::kMaxFileNameBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "CaptureOptions::service_addresses[", i, "]: the host name of ",
          exporter::QuoteForMessage((*addresses)[i].address),
          " is too long for its files: '<host>_<port>", std::string(suffix), "' would be ",
          name.size() + suffix.size(), " bytes, the file system takes at most ",
          exporter::kMaxFileNameBytes, " (NAME_MAX); use a shorter host name or its IP address"));
    }
  }
  return addresses;
}

}  // namespace rpc

absl::Status ValidateCaptureOptions(const CaptureOptions& options) {
  return rpc::CheckOptions(options).status();
}

}  // namespace neuronprof
