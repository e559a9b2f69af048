// A host's Profile response to its files: where the profile is in the
// response, the host's file names in the run folder, and the .xplane.pb
// with the Chrome and Kineto traces beside it.
#include <unistd.h>

#include <future>
#include <memory>
#include <mutex>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "proto/profiler_service.pb.h"
#include "src/export/atomic_file.h"
#include "src/export/chrome_trace.h"
#include "src/export/kineto_trace.h"
#include "src/export/logdir.h"
#include "src/export/trace_stream.h"
#include "src/export/xspace_file.h"
#include "src/rpc/capture_client.h"
#include "src/rpc/capture_run.h"
#include "src/rpc/space_fragments.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace rpc {
namespace {

using tensorflow::profiler::XSpace;

// The host's Kineto trace, where a Profiler puts its own:
// <logdir>/<run>/<host>.pt.trace.json.gz; empty without write_pytorch_trace.
std::string KinetoTraceDir(const Run& run) {
  if (!run.options->write_pytorch_trace) return "";
  return absl::StrCat(run.options->logdir, "/", run.session_id);
}

// Opens the host's trace files (written only once finished), adding their
// paths to `files`.
absl::Status OpenTraceFiles(const Run& run, const std::string& host,
                            std::vector<std::string>* files,
                            std::vector<std::unique_ptr<exporter::TraceFileStream>>* traces) {
  std::vector<std::pair<exporter::TraceFormat, std::string>> wanted;
  if (WritesChromeTrace(*run.options)) {
    wanted.emplace_back(exporter::TraceFormat::kChrome,
                        absl::StrCat(run.run_dir, "/", host, exporter::kChromeTraceSuffix));
  }
  const std::string kineto_dir = KinetoTraceDir(run);
  if (!kineto_dir.empty()) {
    if (auto s = exporter::MakeDirectories(kineto_dir); !s.ok()) return s;
    wanted.emplace_back(exporter::TraceFormat::kKineto,
                        absl::StrCat(kineto_dir, "/", host, exporter::kPyTorchTraceSuffix));
  }
  for (auto& [format, path] : wanted) {
    auto trace = exporter::TraceFileStream::Open(format, path);
    if (!trace.ok()) return trace.status();
    traces->push_back(std::move(*trace));
    files->push_back(std::move(path));
  }
  return absl::OkStatus();
}

}  // namespace

std::string ClaimHostName(Run& run, const ScannedResponse& scanned, const HostJob& job) {
  std::string name = BaseHostName(scanned.hostnames, job.address, job.host_is_shared,
                                  LongestFileSuffix(*run.options), scanned.identity);
  std::lock_guard<std::mutex> lock(run.mutex);
  if (run.taken_names.count(name) > 0) {
    const std::string with_port = absl::StrCat(name, "_", job.address.port);
    name = with_port;
    for (int i = 2; run.taken_names.count(name) > 0; ++i) {
      name = absl::StrCat(with_port, "_", i);
    }
  }
  run.taken_names.insert(name);
  return name;
}

void RemoveServerFile(Run& run, const std::string& file) {
  if (file.empty()) return;
  const std::string base = file.substr(file.rfind('/') + 1);
  const std::string host =
      base.substr(0, base.size() - std::string(exporter::kXPlaneSuffix).size());
  {
    std::lock_guard<std::mutex> lock(run.mutex);
    if (run.taken_names.count(host) > 0) return;
  }
  unlink(file.c_str());
}

absl::StatusOr<ReceivedProfile> ReadResponse(grpc::ByteBuffer& buffer, const Run& run,
                                             const ServiceAddress& address) {
  ReceivedProfile profile;
  if (grpc::Status s = buffer.Dump(&profile.slices); !s.ok()) {
    return absl::InternalError(
        absl::StrCat("cannot read the response of ", address.address, ": ", s.error_message()));
  }
  BytePieces pieces;
  for (const grpc::Slice& slice : profile.slices) {
    pieces.emplace_back(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  auto scanned = ScanProfileResponse(pieces, address.address);
  if (!scanned.ok()) return scanned.status();
  if (scanned->xspace_fields > 0) {
    profile.scanned = std::move(*scanned);
    return profile;
  }
  // Tool data or a file the server saved: no XSpace in the response's own
  // bytes, so no map for protobuf to parse there.
  tensorflow::ProfileResponse response;
  if (!ParsePieces(pieces, &response)) {
    return absl::DataLossError(absl::StrCat(address.address,
                                            " sent a Profile response that is not a "
                                            "well-formed tensorflow.ProfileResponse"));
  }
  auto space =
      ResponseSpace(&response, address, absl::StrCat(run.repository_root, "/", run.session_id),
                    &profile.saved_file);
  if (!space.ok()) return space.status();
  profile.scanned.events = xplane::NumEvents(*space);
  profile.scanned.hostnames.assign(space->hostnames().begin(), space->hostnames().end());
  profile.scanned.warnings.assign(space->warnings().begin(), space->warnings().end());
  profile.space = std::move(*space);
  return profile;
}

absl::StatusOr<std::vector<std::string>> WriteHostFiles(
    const Run& run, ReceivedProfile& profile, const std::string& host,
    const ServiceAddress& address, const std::optional<xplane::ClockOffset>& offset,
    HostCaptureTimings& timings, Clock::time_point received) {
  if (!profile.space && offset && profile.scanned.epoch_line_times) {
    // Lines on the epoch move one by one: parse them.
    XSpace space;
    if (!ParsePieces(profile.scanned.xspace, &space)) {
      return absl::DataLossError(
          absl::StrCat(address.address, " sent a profile that is not an XSpace"));
    }
    profile.space = std::move(space);
  }
  if (profile.space) {
    xplane::AlignSpaceClock(offset, &*profile.space);
    exporter::ExportOptions export_options;
    export_options.chrome_trace = WritesChromeTrace(*run.options);
    export_options.pytorch_trace_dir = KinetoTraceDir(run);
    auto files = exporter::WriteProfileFiles(*profile.space, run.run_dir, host, export_options);
    timings.xplane_written_ms = MillisSince(received);
    return files;
  }
  tensorflow::profiler::XPlane environment;
  if (profile.scanned.task_environment) {
    environment = *profile.scanned.task_environment;
  } else {
    environment.set_id(profile.scanned.planes);
    environment.set_name(xplane::kTaskEnvironmentPlaneName);
  }
  xplane::RecordClockOffset(offset, &environment);
  std::string environment_bytes;
  const BytePieces xspace =
      ReplaceTaskEnvironment(profile.scanned, environment, &environment_bytes);
  std::vector<std::string> files = {absl::StrCat(run.run_dir, "/", host, exporter::kXPlaneSuffix)};
  // The xplane.pb (and its fsync) is written beside the traces, from the
  // same bytes.
  std::future<absl::Status> xplane_written =
      std::async(std::launch::async, [&, path = files[0]] {  // `files` grows meanwhile.
        absl::Status written = exporter::WriteFileAtomically(path, xspace);
        timings.xplane_written_ms = MillisSince(received);
        return written;
      });
  std::vector<std::unique_ptr<exporter::TraceFileStream>> traces;
  absl::Status status = OpenTraceFiles(run, host, &files, &traces);
  if (status.ok() && !traces.empty()) {
    // Fragment by fragment as the bytes are parsed: no whole XSpace.
    status = ForEachSpaceFragment(xspace, kCaptureFragmentEvents, [&](const XSpace& fragment) {
      for (const auto& trace : traces) {
        if (absl::Status s = trace->Append(fragment); !s.ok()) return s;
      }
      return absl::OkStatus();
    });
    if (status.code() == absl::StatusCode::kDataLoss) {
      status = absl::DataLossError(
          absl::StrCat(address.address, " sent a profile that is not an XSpace"));
    }
  }
  // Joined before any return; no trace is kept without its xplane.pb
  // (a trace not finished is removed).
  const absl::Status written = xplane_written.get();
  if (!written.ok()) return written;
  for (const auto& trace : traces) {
    if (!status.ok()) break;
    status = trace->Finish();
  }
  if (!status.ok()) {
    unlink(files[0].c_str());
    return status;
  }
  return files;
}

absl::StatusOr<XSpace> ResponseSpace(tensorflow::ProfileResponse* response,
                                     const ServiceAddress& address, const std::string& saved_dir,
                                     std::string* saved_file) {
  XSpace space;
  if (response->has_xspace()) {
    space.Swap(response->mutable_xspace());  // Profiles can be large: no copy.
    return space;
  }
  for (const auto& tool : response->tool_data()) {
    if (absl::EndsWith(tool.name(), "xplane.pb")) {
      if (tool.data().empty()) return space;
      // The file reader's parse: linear on any map entries.
      auto parsed = exporter::ParseXSpace(tool.data(), tool.name());
      if (!parsed.ok()) {
        return absl::DataLossError(absl::StrCat(address.address, " sent tool data '", tool.name(),
                                                "' that is not an XSpace"));
      }
      return parsed;
    }
  }
  const std::string file =
      absl::StrCat(saved_dir, "/", RequestHostName(address), exporter::kXPlaneSuffix);
  if (access(file.c_str(), F_OK) == 0) {
    // What is there is untrusted: ReadXSpaceFile refuses a FIFO (which would
    // hang a plain read), a device, an empty or oversized file.
    auto saved = exporter::ReadXSpaceFile(file);
    if (!saved.ok()) {
      return absl::Status(
          saved.status().code(),
          absl::StrCat("the profile ", address.address, " saved: ", saved.status().message()));
    }
    *saved_file = file;
    return std::move(*saved);
  }
  if (response->empty_trace()) return space;  // Nothing to fetch: empty.
  return absl::FailedPreconditionError(
      absl::StrCat(address.address,
                   " did not return its profile (it does not support emit_xspace) and saved it on "
                   "its own machine under ",
                   saved_dir, "/; copy it from there"));
}

bool WritesChromeTrace(const CaptureOptions& options) {
  return exporter::ChromeTraceWanted(options.write_chrome_trace, options.write_pytorch_trace);
}

std::string_view LongestFileSuffix(const CaptureOptions& options) {
  if (options.write_pytorch_trace) return exporter::kPyTorchTraceSuffix;
  return WritesChromeTrace(options) ? exporter::kChromeTraceSuffix : exporter::kXPlaneSuffix;
}

std::string AddressHostName(const ServiceAddress& address) {
  return exporter::ToPlainName(absl::StrCat(address.host, "_", address.port));
}

std::string BaseHostName(const XSpace& space, const ServiceAddress& address, bool host_is_shared,
                         std::string_view longest_suffix) {
  return BaseHostName(std::vector<std::string>(space.hostnames().begin(), space.hostnames().end()),
                      address, host_is_shared, longest_suffix, xplane::ReadJobIdentity(space));
}

std::string BaseHostName(const std::vector<std::string>& hostnames, const ServiceAddress& address,
                         bool host_is_shared, std::string_view longest_suffix,
                         const xplane::JobIdentity& identity) {
  if (!hostnames.empty() && exporter::IsPlainName(hostnames[0])) {
    // Ranks sharing a host are told apart by rank, as their own files are;
    // other servers sharing a host by port.
    std::string name = xplane::RankedHostName(hostnames[0], identity);
    if (host_is_shared && !identity.distributed()) absl::StrAppend(&name, "_", address.port);
    // A name too long for its files falls back to host_port, which
    // CheckOptions made sure fits before the capture started.
    if (name.size() + longest_suffix.size() <= exporter::kMaxFileNameBytes) return name;
  }
  return AddressHostName(address);
}

}  // namespace rpc
}  // namespace neuronprof
