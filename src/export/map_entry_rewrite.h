// XSpace bytes made safe for protobuf's own parser. libprotobuf 3.21 parses
// a map entry that goes on after its value (key A, value, key B: legal wire
// format) by inserting A, erasing it and inserting B, and each erase from the
// table's first filled bucket scans on to the next filled one. A crafted
// plane whose kept keys share one bucket (keys alike in their low 48 bits, so
// whatever the map's random seed) and whose other entries all churn makes
// that O(buckets) per entry: quadratic up to 65,536 buckets, then ~10^4 steps
// a byte. Entries in the form protobuf writes itself (key, then value, then
// nothing) take one insert each, so those entries are rewritten to it.
#ifndef NEURONPROF_SRC_EXPORT_MAP_ENTRY_REWRITE_H_
#define NEURONPROF_SRC_EXPORT_MAP_ENTRY_REWRITE_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace neuronprof {
namespace exporter {

// The serialized XSpace `data` with every XPlane metadata map entry
// (event_metadata, stat_metadata) that holds fields after its value
// rewritten as key, then value: the last key, the values' bytes concatenated
// (protobuf merges repeated message fields, so the parse is unchanged),
// other fields dropped (protobuf ignores them). nullopt when no entry needs
// it (the common case: parse `data` itself, no copy); an error when `data`
// is not well-formed protobuf wire format. Linear in `data`'s size.
absl::StatusOr<std::optional<std::string>> CanonicalMapEntries(std::string_view data);

// Whether CanonicalMapEntries would rewrite this metadata map entry (its
// bytes, without the field's tag and length), or refuse it as malformed:
// for readers that walk the planes themselves (the capture client's scan
// of gRPC's slices) and rewrite only when an entry needs it.
bool MapEntryNeedsRewrite(std::string_view entry);

}  // namespace exporter
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_EXPORT_MAP_ENTRY_REWRITE_H_
