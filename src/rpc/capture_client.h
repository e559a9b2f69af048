// The remote capture client behind neuronprof::Capture (include/neuronprof/
// capture.h). Internal pieces, exposed for the tests.
#ifndef NEURONPROF_SRC_RPC_CAPTURE_CLIENT_H_
#define NEURONPROF_SRC_RPC_CAPTURE_CLIENT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "neuronprof/capture.h"
#include "proto/profiler_service.pb.h"
#include "proto/xplane.pb.h"
#include "src/rpc/service_address.h"
#include "src/xplane/job_identity.h"

namespace neuronprof {
namespace rpc {

// The ProfileRequest for one host and window, shaped like TSL's
// capture_profile client so that TSL-based servers answer it too. Its
// start_timestamp_ns is now on the server's clock: this process's clock
// plus `server_clock_offset_ns` (server minus client, 0 when unmeasured).
tensorflow::ProfileRequest BuildProfileRequest(const CaptureOptions& options,
                                               const ServiceAddress& address,
                                               const std::string& repository_root,
                                               const std::string& session_id,
                                               int64_t server_clock_offset_ns = 0);

// The host_name a request carries for `address`: its host, as a plain name.
std::string RequestHostName(const ServiceAddress& address);

// Why a capture of `address` came back without events, from what the
// options and the server's warnings (`space` may be null) tell.
std::string EmptyCaptureReason(const CaptureOptions& options, const ServiceAddress& address,
                               const tensorflow::profiler::XSpace* space);
// The same from the space's warnings alone.
std::string EmptyCaptureReason(const CaptureOptions& options, const ServiceAddress& address,
                               const std::vector<std::string>& warnings);

// The XSpace of a successful Profile call, wherever the server put it:
// in the response (emit_xspace), as "xplane.pb" tool data (older TSL
// servers), or saved by the server itself as
// <saved_dir>/<RequestHostName>.xplane.pb, saved_dir being
// <repository_root>/<session_id> (TSL servers that ignore emit_xspace; only
// visible when the server shares this filesystem). That file is read with
// exporter::ReadXSpaceFile: a FIFO, device, empty or oversized file is an
// error, never a hang. `saved_file` is set when the space came from it.
// The space is moved out of `response`; tool data and a saved file are
// parsed by the file reader (exporter::ParseXSpace), linear on any map
// entries. The client hands it only responses without an xspace field:
// one with it is read from its bytes (rpc::ScanProfileResponse).
absl::StatusOr<tensorflow::profiler::XSpace> ResponseSpace(tensorflow::ProfileResponse* response,
                                                           const ServiceAddress& address,
                                                           const std::string& saved_dir,
                                                           std::string* saved_file);

// Whether a capture of `options` writes <host>.trace.json.gz: as
// CaptureOptions::write_chrome_trace says, else only without the Kineto
// trace.
bool WritesChromeTrace(const CaptureOptions& options);

// The longest suffix the client gives a host's files: ".pt.trace.json.gz"
// with CaptureOptions::write_pytorch_trace, else ".trace.json.gz" when
// WritesChromeTrace, else ".xplane.pb".
std::string_view LongestFileSuffix(const CaptureOptions& options);

// <host>_<port> of `address`, as a plain name: the fallback file name
// prefix. Capture() refuses an address whose prefix plus
// LongestFileSuffix exceeds NAME_MAX before any capture starts.
std::string AddressHostName(const ServiceAddress& address);

// The file name prefix for a host before collisions are resolved: the
// server's plain host name, else AddressHostName; for a rank of a
// distributed job (world_size > 1 in the profile's Task Environment plane)
// "<host>_rank<r>" (xplane::RankedHostName, as a Profiler names its own
// files), else with "_<port>" when the address shares its host with another
// address of the same capture. A server name whose files (prefix +
// `longest_suffix`) would exceed NAME_MAX falls back to AddressHostName too.
std::string BaseHostName(const tensorflow::profiler::XSpace& space, const ServiceAddress& address,
                         bool host_is_shared, std::string_view longest_suffix);
// The same from the space's host names and rank identity.
std::string BaseHostName(const std::vector<std::string>& hostnames, const ServiceAddress& address,
                         bool host_is_shared, std::string_view longest_suffix,
                         const xplane::JobIdentity& identity = xplane::JobIdentity());

}  // namespace rpc
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_RPC_CAPTURE_CLIENT_H_
