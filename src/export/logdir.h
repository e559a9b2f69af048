// TensorBoard logdir layout: <logdir>/plugins/profile/<run>/<host>.<tool>.
#ifndef NEURONPROF_SRC_EXPORT_LOGDIR_H_
#define NEURONPROF_SRC_EXPORT_LOGDIR_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/xplane.pb.h"
#include "src/export/xplane_stream.h"
#include "src/xplane/plain_name.h"

namespace neuronprof {
namespace exporter {

inline constexpr char kXPlaneSuffix[] = ".xplane.pb";
inline constexpr char kChromeTraceSuffix[] = ".trace.json.gz";

// The one plain-name rule and its check live in xplane/plain_name.h (device
// plug-in names follow it too); export's users reach them through here.
using xplane::CheckPlainName;
using xplane::IsPlainName;
using xplane::kMaxFileNameBytes;
using xplane::QuoteForMessage;

// Replaces every character a plain name may not hold with '_'.
std::string ToPlainName(std::string_view name);

// This machine's host name, as a plain name.
std::string LocalHostName();
// YYYY_MM_DD_HH_MM_SS in local time.
std::string RunNameForTime(int64_t epoch_ns);
std::string ProfileRoot(const std::string& logdir);  // <logdir>/plugins/profile

// Creates <logdir>/plugins/profile/<run> and returns its path. An explicit
// `run_name` must not exist yet. Without one, the name comes from
// `epoch_ns`; if that folder exists, a _<milliseconds> suffix (then a
// counter) keeps it unique.
absl::StatusOr<std::string> CreateRunDirectory(const std::string& logdir,
                                               const std::string& run_name, int64_t epoch_ns);

// <logdir>/plugins/profile/<run_name>, created or, when it exists as a
// folder (not a link), joined: the one run folder that every rank of a
// distributed job writes its <host>_rank<r> files into. `created` says
// which, so that a failed write removes the folder only when it made it.
struct RunDirectory {
  std::string path;
  bool created = false;
};
absl::StatusOr<RunDirectory> JoinRunDirectory(const std::string& logdir,
                                              const std::string& run_name);

// Creates a fresh folder $TMPDIR/neuronprof-unsaved-<run>-XXXXXX (mode
// 0700, /tmp without TMPDIR) with mkdtemp: exclusive, never an existing
// folder or a link planted at a predictable name. For captures that could
// not be written to their logdir.
absl::StatusOr<std::string> CreateFallbackDirectory(const std::string& run);

using PlaneFragments = std::function<absl::Status(tensorflow::profiler::XPlane* plane,
                                                  const std::function<absl::Status()>& ready)>;

// The one rule for <host>.trace.json.gz of every writer (Profiler, capture
// server, capture client): as `asked` says, else only where no Kineto trace
// is written (Perfetto and chrome://tracing open that one too).
bool ChromeTraceWanted(std::optional<bool> asked, bool kineto_written);

struct ExportOptions {
  bool chrome_trace = true;
  // When set, also <pytorch_trace_dir>/<host>.pt.trace.json.gz (Kineto
  // format, for the PyTorch TensorBoard plugin and HTA); the folder is made.
  std::string pytorch_trace_dir;
  // When set, xplane.pb is serialized once, into this folder, and then
  // placed into `dir` without a second serialization: a hard link when
  // `keep_staged_xplane` (both names stay), a rename otherwise. Across
  // filesystems (EXDEV) the file is copied and the staged one removed
  // unless kept.
  std::string xplane_staging_dir;
  bool keep_staged_xplane = false;
  // When set, xplane.pb holds `space` and this plane after its planes,
  // written while it is built (WriteXSpaceStreamed), perhaps more than
  // once (the fallback folder). The Chrome and Kineto traces then need
  // `plane_fragments`.
  StreamedPlane streamed_plane;
  // The streamed plane again, in fragments for the trace writers
  // (trace_stream.h), after streamed_plane has run: it fills `plane` (the
  // last plane of a fragment that holds `space`) with the whole plane's
  // metadata, then with each fragment's events, and calls `ready` for each.
  PlaneFragments plane_fragments;
};

// Writes <dir>/<host>.xplane.pb and the other exports, each atomically.
// Returns the paths written (the staged xplane.pb last, when kept).
absl::StatusOr<std::vector<std::string>> WriteProfileFiles(
    const tensorflow::profiler::XSpace& space, const std::string& dir, const std::string& host,
    const ExportOptions& options);

}  // namespace exporter
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_EXPORT_LOGDIR_H_
