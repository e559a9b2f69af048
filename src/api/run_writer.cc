#include "src/api/run_writer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <exception>

#include "absl/strings/str_cat.h"
#include "src/export/atomic_file.h"
#include "src/export/logdir.h"
#include "src/rpc/process_server.h"

namespace neuronprof {
namespace api {
namespace {

constexpr char kWorkingDirName[] = ".neuronprof_working";

}  // namespace

collectors::CollectorOptions ToCollectorOptions(const ProfilerOptions& options,
                                                const xplane::JobIdentity& identity) {
  collectors::CollectorOptions capture;
  capture.host_tracer_level = options.host_tracer_level;
  capture.device_tracer_level = options.device_tracer_level;
  capture.operators = options.profile_type == ProfileType::kOperator;
  capture.require_operators = capture.operators;
  capture.max_buffer_bytes = static_cast<uint64_t>(options.max_buffer_bytes);
  capture.world_size = identity.world_size;
  return capture;
}

bool WritesChromeTrace(const ProfilerOptions& options) {
  return exporter::ChromeTraceWanted(
      options.write_chrome_trace,
      options.write_pytorch_trace && options.profile_type == ProfileType::kOperator);
}

absl::StatusOr<xplane::JobIdentity> ResolveIdentity(const ProfilerOptions& options) {
  xplane::JobIdentityOptions job;
  job.rank = options.rank;
  job.local_rank = options.local_rank;
  job.world_size = options.world_size;
  job.backend = options.backend;
  return xplane::ResolveJobIdentity(job, "ProfilerOptions::");
}

int ServerPort(const ProfilerOptions& options, const xplane::JobIdentity& identity) {
  if (options.port == 0) return 0;
  return options.port + (options.port_offset_by_local_rank ? identity.local_rank : 0);
}

absl::Status EnsureCaptureServer(const ProfilerOptions& options,
                                 const xplane::JobIdentity& identity) {
  const int port = ServerPort(options, identity);
  if (port == 0) return absl::OkStatus();
  return rpc::EnsureProcessServer(port, options.logdir, options.max_buffer_bytes, identity);
}

void RunWriter::NotifyTraceReady(ProfileResult* result) const {
  if (!options_.on_trace_ready) return;
  // The user's code runs on our thread: what it throws must not end the
  // process, and must not go unnoticed.
  try {
    options_.on_trace_ready(*result);
  } catch (const std::exception& e) {
    result->warnings.push_back(absl::StrCat("on_trace_ready threw: ", e.what()));
  } catch (...) {
    result->warnings.push_back("on_trace_ready threw a non-standard exception");
  }
}

absl::StatusOr<ProfileResult> RunWriter::Write(session::CaptureResult* captured,
                                               const std::string& run_name,
                                               uint64_t* numbered) const {
  return WriteSpace(&captured->space, captured->stats, captured->start_epoch_ns,
                    captured->stop_epoch_ns, run_name, numbered);
}

absl::StatusOr<ProfileResult> RunWriter::WriteStreamed(session::StreamedCapture* captured,
                                                       const std::string& run_name,
                                                       uint64_t* numbered) const {
  return WriteSpace(
      &captured->result.space, captured->result.stats, captured->result.start_epoch_ns,
      captured->result.stop_epoch_ns, run_name, numbered,
      [captured](xplane::XPlaneSink* sink) { return captured->WriteHostPlane(sink); },
      [captured](tensorflow::profiler::XPlane* plane, const std::function<absl::Status()>& ready) {
        return captured->WriteHostFragments(plane, ready);
      });
}

absl::StatusOr<ProfileResult> RunWriter::WriteSpace(
    tensorflow::profiler::XSpace* space, const collectors::CollectStats& stats,
    int64_t start_epoch_ns, int64_t stop_epoch_ns, const std::string& run_name, uint64_t* numbered,
    const exporter::StreamedPlane& streamed, const exporter::PlaneFragments& fragments) const {
  const std::string machine =
      options_.host_name.empty() ? exporter::LocalHostName() : options_.host_name;
  space->add_hostnames(machine);
  xplane::AddJobIdentity(identity_, space);
  // One file per host and rank: ranks of one host share its name.
  const std::string host = xplane::RankedHostName(machine, identity_);
  ProfileResult result;
  // A streamed plane counts its events while it is written.
  auto count = [&result, &stats] {
    result.events = stats.events;
    result.threads = stats.threads;
    result.dropped_events = stats.dropped;
  };
  result.duration_ns = stop_epoch_ns - start_epoch_ns;
  if (options_.port != 0 && server_status_.ok()) {
    result.server_port = ServerPort(options_, identity_);
  }
  if (!server_status_.ok()) {
    result.warnings.push_back(absl::StrCat("no capture server: ", server_status_.message(),
                                           " (ProfilerOptions::port; 0 = no server)"));
  }
  for (const std::string& warning : space->warnings()) {
    result.warnings.push_back(warning);
  }
  for (const std::string& error : space->errors()) {
    result.warnings.push_back(absl::StrCat("error: ", error));
  }

  auto run_dir = OpenFreeRunDirectory(run_name, start_epoch_ns, host, numbered);
  absl::Status written = run_dir.status();
  if (run_dir.ok()) {
    result.run_dir = run_dir->path;
    written = WriteRun(*space, run_dir->path, host, streamed, fragments, &result.files);
    count();
    if (written.ok()) return result;
    if (run_dir->created) {
      exporter::RemoveTree(run_dir->path);  // Ours (made exclusively), half-written.
    } else {
      for (const char* suffix : {exporter::kXPlaneSuffix, exporter::kChromeTraceSuffix}) {
        unlink(absl::StrCat(run_dir->path, "/", host, suffix).c_str());  // Only ours.
      }
    }
  }
  // Keep the capture: write it where we can and say where.
  const std::string run = run_name.empty() ? exporter::RunNameForTime(start_epoch_ns) : run_name;
  auto fallback = exporter::CreateFallbackDirectory(run);
  absl::Status fallback_status = fallback.status();
  if (fallback.ok()) {
    exporter::ExportOptions export_options;
    export_options.chrome_trace = WritesChromeTrace(options_);
    if (options_.write_pytorch_trace) export_options.pytorch_trace_dir = *fallback;
    export_options.streamed_plane = streamed;
    export_options.plane_fragments = fragments;
    fallback_status = exporter::WriteProfileFiles(*space, *fallback, host, export_options).status();
    count();
    if (!fallback_status.ok()) exporter::RemoveTree(*fallback);
  }
  if (fallback_status.ok()) {
    return absl::Status(written.code(),
                        absl::StrCat("cannot write the profile to logdir '", options_.logdir,
                                     "': ", written.message(), ". The capture (", result.events,
                                     " events) was saved to '", *fallback,
                                     "/' instead; copy that folder to <logdir>/plugins/profile/"));
  }
  return absl::Status(written.code(),
                      absl::StrCat("cannot write the profile to logdir '", options_.logdir,
                                   "': ", written.message(), "; the fallback folder failed too: ",
                                   fallback_status.message()));
}

absl::StatusOr<exporter::RunDirectory> RunWriter::OpenRunDirectory(const std::string& run_name,
                                                                   int64_t start_epoch_ns,
                                                                   const std::string& host) const {
  // The ranks of one job given one run_name share its folder: their files
  // differ by rank, and one run is what the multi-rank summary, xprof and
  // HTA read. A rank's own earlier files are never overwritten.
  if (identity_.world_size > 1 && !run_name.empty()) {
    auto run = exporter::JoinRunDirectory(options_.logdir, run_name);
    if (!run.ok()) return run.status();
    const std::string xplane = absl::StrCat(run->path, "/", host, exporter::kXPlaneSuffix);
    struct stat st;
    if (lstat(xplane.c_str(), &st) == 0) {
      return absl::AlreadyExistsError(
          absl::StrCat("run directory '", run->path, "' already holds rank ", identity_.rank, "'s ",
                       host, exporter::kXPlaneSuffix, "; choose another run_name"));
    }
    return run;
  }
  auto path = exporter::CreateRunDirectory(options_.logdir, run_name, start_epoch_ns);
  if (!path.ok()) return path.status();
  return exporter::RunDirectory{*path, true};
}

absl::StatusOr<exporter::RunDirectory> RunWriter::OpenFreeRunDirectory(const std::string& run_name,
                                                                       int64_t start_epoch_ns,
                                                                       const std::string& host,
                                                                       uint64_t* numbered) const {
  auto run_dir = OpenRunDirectory(run_name, start_epoch_ns, host);
  if (numbered == nullptr || run_name.empty()) return run_dir;
  // Each name tried is taken by a folder (or this rank's file) that
  // exists, so this ends; the counter never goes back, so a caller's many
  // runs try each taken name at most once between them.
  while (absl::IsAlreadyExists(run_dir.status())) {
    run_dir = OpenRunDirectory(absl::StrCat(run_name, "_", (*numbered)++), start_epoch_ns, host);
  }
  return run_dir;
}

// The raw capture is serialized once, into the working folder, and moved
// (or, with delete_working false, hard-linked) into the run folder beside
// the viewer files; the working folder goes unless delete_working is false.
absl::Status RunWriter::WriteRun(const tensorflow::profiler::XSpace& space,
                                 const std::string& run_dir, const std::string& host,
                                 const exporter::StreamedPlane& streamed,
                                 const exporter::PlaneFragments& fragments,
                                 std::vector<std::string>* files) const {
  const std::string run = run_dir.substr(run_dir.rfind('/') + 1);
  const std::string working_root = absl::StrCat(options_.logdir, "/", kWorkingDirName);
  const std::string working = absl::StrCat(working_root, "/", run);
  // On failure nothing of this host's run stays: no working copy, no empty
  // folders (the caller removes its files in the run folder). Only this
  // host's file goes: the ranks of a job stage theirs in the same folder.
  auto remove_working = [&] {
    unlink(absl::StrCat(working, "/", host, exporter::kXPlaneSuffix).c_str());
    rmdir(working.c_str());       // Only if no other rank left files there.
    rmdir(working_root.c_str());  // Only if no other run left files there.
  };
  if (auto s = exporter::MakeDirectories(working); !s.ok()) {
    remove_working();
    return s;
  }
  exporter::ExportOptions export_options;
  export_options.chrome_trace = WritesChromeTrace(options_);
  export_options.xplane_staging_dir = working;
  export_options.keep_staged_xplane = !options_.delete_working;
  export_options.streamed_plane = streamed;
  export_options.plane_fragments = fragments;
  // torch-tb-profiler takes every folder holding *.pt.trace.json.gz as a
  // run: <logdir>/<run>/ shows up under the same name as in xprof.
  if (options_.write_pytorch_trace) {
    export_options.pytorch_trace_dir = absl::StrCat(options_.logdir, "/", run);
  }
  auto exported = exporter::WriteProfileFiles(space, run_dir, host, export_options);
  if (!exported.ok()) {
    remove_working();
    if (!export_options.pytorch_trace_dir.empty()) {
      rmdir(export_options.pytorch_trace_dir.c_str());  // Only if empty.
    }
    return exported.status();
  }
  *files = *exported;
  if (options_.delete_working) remove_working();
  return absl::OkStatus();
}

}  // namespace api
}  // namespace neuronprof
