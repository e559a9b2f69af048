// What every `neuronprof` command reads: a logdir (its newest run), a run
// folder (xprof's <logdir>/plugins/profile/<run>, or the PyTorch plugin's
// <logdir>/<run> of Kineto traces) or a file (.xplane.pb, or a trace that a
// capture wrote next to its .xplane.pb); and the one rule for what they
// write: never over an existing file without --force.
#ifndef NEURONPROF_TOOLS_CAPTURE_INPUT_H_
#define NEURONPROF_TOOLS_CAPTURE_INPUT_H_

#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace neuronprof {
namespace tools {

struct CaptureInput {
  std::filesystem::path run;                 // empty for a file given as such
  std::vector<std::filesystem::path> files;  // the .xplane.pb files, sorted
  std::string note;  // how a trace or a Kineto folder was mapped (else empty)
};

// The .xplane.pb captures `input` names; with `host`, only that host's.
// NotFound / InvalidArgument say precisely what was found instead.
absl::StatusOr<CaptureInput> ResolveCaptureInput(const std::string& input,
                                                 const std::string& host = "");

// ResolveCaptureInput, with its note (how a trace or a Kineto folder was
// mapped) printed on stderr when it resolved.
absl::StatusOr<CaptureInput> ResolveWithNote(const std::string& input,
                                             const std::string& host = "");

// The help of every command's input argument.
inline constexpr char kCaptureInputHelp[] =
    "a logdir (its newest run), a run folder (<logdir>/plugins/profile/<run>, or the PyTorch "
    "plugin's <logdir>/<run>) or a file (.xplane.pb, or the .trace.json.gz / "
    ".pt.trace.json.gz written beside it)";

// A file's host: its name without .xplane.pb.
std::string HostOf(const std::filesystem::path& file);

// OK when `path` may be written: "-" (stdout), a path that does not exist,
// or `force`. Else AlreadyExists naming the option that allows it.
absl::Status CheckOverwrite(const std::string& path, bool force);

}  // namespace tools
}  // namespace neuronprof

#endif  // NEURONPROF_TOOLS_CAPTURE_INPUT_H_
