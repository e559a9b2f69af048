// What the Kineto writer (kineto_trace.cc) resolves once per host plane so
// that each of a million events reads its stats without a name look-up: the
// stat ids it reads, each id's role, an event's stats by role, the event
// metadata by id with their translated inputs, and each operator's args
// formatted once.
#ifndef NEURONPROF_SRC_EXPORT_KINETO_HOST_STATS_H_
#define NEURONPROF_SRC_EXPORT_KINETO_HOST_STATS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "proto/xplane.pb.h"
#include "src/export/event_stats.h"
#include "src/xplane/stat_lookup.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace exporter {
namespace kineto {

// The host plane's ids of the stats the writer reads from each event,
// resolved once (-1: the plane has none): not a name look-up per stat of a
// million events.
struct HostStatIds {
  HostStatIds() = default;
  explicit HostStatIds(const xplane::PlaneVisitor& plane);
  int64_t framework = -1, root_level = -1, step_num = -1, iter_num = -1, comm_id = -1,
          collective = -1, comm_nelems = -1, comm_out_nelems = -1, world_size = -1, comm_dtype = -1,
          input_dims = -1, input_types = -1, input_values = -1, sequence = -1, fwd_thread = -1,
          direction = -1, memory_device_type = -1, allocator = -1, allocation_bytes = -1,
          requested_bytes = -1, device_id = -1, address = -1, bytes_allocated = -1,
          pool_reserved = -1, instant = -1, stack = -1;
};

// The stats of HostStatIds that one host event has, found in one pass over
// the event's stats and then its metadata's (the first of an id wins, the
// event's own before its metadata's, as EventVisitor::Stat finds them):
// not a scan of both per stat read.
enum HostRole : uint8_t {
  kFramework,
  kRootLevel,
  kStepNum,
  kIterNum,
  kCommId,
  kCollective,
  kCommNelems,
  kCommOutNelems,
  kWorldSize,
  kCommDtype,
  kInputDims,
  kInputTypes,
  kInputValues,
  kSequence,
  kFwdThread,
  kDirection,
  kMemoryDeviceType,
  kAllocator,
  kAllocationBytes,
  kRequestedBytes,
  kDeviceId,
  kAddress,
  kBytesAllocated,
  kPoolReserved,
  kInstant,
  kStack,
  kHostRoles,
  kNoRole = 0xff
};

// Stat id -> HostRole, for one host plane.
class HostRoles {
 public:
  HostRoles() = default;
  HostRoles(const tensorflow::profiler::XPlane& plane, const HostStatIds& ids);
  uint8_t Of(int64_t id) const {
    if (id < 0) return kNoRole;
    if (dense_) {
      return static_cast<uint64_t>(id) < by_id_.size() ? by_id_[static_cast<size_t>(id)]
                                                       : static_cast<uint8_t>(kNoRole);
    }
    for (size_t role = 0; role < ids_.size(); ++role) {
      if (ids_[role] == id) return static_cast<uint8_t>(role);
    }
    return kNoRole;
  }

 private:
  std::array<int64_t, kHostRoles> ids_{};
  std::vector<uint8_t> by_id_;
  bool dense_ = false;
};

// One host event's stats by role (nullptr: the event has none). Which
// roles were found is a bit set: a million events' spans neither clear a
// table of kHostRoles pointers each nor call out to read absent stats.
struct HostStats {
  HostStats(const HostRoles& roles, const StatNames& names, const xplane::EventVisitor& event)
      : names(&names) {
    for (const tensorflow::profiler::XStat& stat : event.raw().stats()) Take(roles, stat);
    if (event.Metadata() == nullptr) return;
    for (const tensorflow::profiler::XStat& stat : event.Metadata()->stats()) Take(roles, stat);
  }
  bool Has(HostRole role) const { return (found_ >> role) & 1; }
  const tensorflow::profiler::XStat* Stat(HostRole role) const {
    return Has(role) ? at_[role] : nullptr;
  }
  std::optional<int64_t> Int(HostRole role) const {
    if (!Has(role)) return std::nullopt;
    return xplane::IntValue(at_[role]);
  }
  // xplane::StrValue's answer, an interned string's text taken from the
  // plane's names (not a protobuf map look-up).
  std::optional<std::string_view> Str(HostRole role) const {
    const tensorflow::profiler::XStat* stat = Stat(role);
    if (stat == nullptr) return std::nullopt;
    if (stat->value_case() == tensorflow::profiler::XStat::kStrValue) {
      return std::string_view(stat->str_value());
    }
    if (stat->value_case() != tensorflow::profiler::XStat::kRefValue) return std::nullopt;
    const StatNames::Entry* entry = names->Find(static_cast<int64_t>(stat->ref_value()));
    return entry == nullptr ? std::string_view() : entry->name;
  }

  const StatNames* names;

 private:
  static_assert(kHostRoles <= 32, "found_ holds a bit per role");
  void Take(const HostRoles& roles, const tensorflow::profiler::XStat& stat) {
    const uint8_t role = roles.Of(stat.metadata_id());
    if (role == kNoRole || Has(static_cast<HostRole>(role))) return;
    at_[role] = &stat;
    found_ |= uint32_t{1} << role;
  }

  uint32_t found_ = 0;
  std::array<const tensorflow::profiler::XStat*, kHostRoles> at_;  // Set where found_ says.
};

// What a host plane's event metadata carry for its operators, resolved once
// per plane and shared by the jobs: the metadata by id (not a protobuf map
// look-up per event) and the translation of each signature stat (input
// dims, types, concrete inputs: a few hundred distinct ones on a million
// operators).
class HostMetadata {
 public:
  struct Inputs {
    std::string_view text;      // The stat's string.
    bool strict_array = false;  // Input Dims / Concrete Inputs: copied verbatim.
    std::string types;          // Input type: the JSON array written.
  };

  HostMetadata(const xplane::PlaneVisitor& plane, const HostRoles& roles);
  const tensorflow::profiler::XEventMetadata* Find(int64_t id) const {
    if (IsDense(id)) return dense_[static_cast<size_t>(id)];
    return plane_->EventMetadata(id);
  }
  // Whether `id` is found in the table by id (DenseTableSize), not in the map.
  bool IsDense(int64_t id) const { return id >= 0 && static_cast<uint64_t>(id) < dense_.size(); }
  // The translation of an input stat of a metadata; nullptr for an
  // event's own (Translate it).
  const Inputs* Cached(const tensorflow::profiler::XStat* stat) const {
    auto it = inputs_.find(stat);
    return it == inputs_.end() ? nullptr : &it->second;
  }

  static Inputs Translate(HostRole role, std::string_view text);

 private:
  const xplane::PlaneVisitor* plane_;
  std::vector<const tensorflow::profiler::XEventMetadata*> dense_;
  absl::flat_hash_map<const tensorflow::profiler::XStat*, Inputs> inputs_;
};

// The args an operator's metadata gives every event of it, formatted once
// (a few hundred signatures for a million operators): the translated
// inputs that follow "External id", and the metadata's stats that follow
// the event's own. An event writes them as they are when nothing of its
// own could change them (no stat of its own overrides, renames or repeats
// one; see Fits); other events take the general path, whose output is the
// same.
class OperatorSignatures {
 public:
  struct Signature {
    bool usable = false;
    std::string inputs;  // ,"Input Dims":..,"Input type":..,"Concrete Inputs":..
    std::string tail;    // ,"<name>":<value> of the metadata's stats not translated
    absl::InlinedVector<int64_t, 8> ids;       // The metadata's stat ids.
    absl::InlinedVector<int64_t, 8> name_ids;  // StatNames::Entry::name_id of each named one.
  };

  OperatorSignatures(const xplane::PlaneVisitor& plane, const HostRoles& roles,
                     const HostMetadata& metadata, const StatNames& names);

  // The signature of metadata `id` if the event `own` stats may use it.
  const Signature* For(int64_t id, const tensorflow::profiler::XEvent& event) const {
    if (id < 0 || static_cast<uint64_t>(id) >= by_id_.size()) return nullptr;
    const Signature& signature = by_id_[static_cast<size_t>(id)];
    return signature.usable && Fits(signature, event) ? &signature : nullptr;
  }

  // Whether a stat named `name` could meet a key the operator path writes.
  static bool IsOperatorKey(std::string_view name);

 private:
  Signature Make(const xplane::PlaneVisitor& plane, const HostMetadata& metadata,
                 const tensorflow::profiler::XEventMetadata& event) const;
  // The event's own stats leave the signature's text as it is: none is
  // one of the metadata's (overriding it), none translated but the
  // sequence number and an integer forward thread, and the names of those
  // passed through are neither a key written nor repeated.
  bool Fits(const Signature& signature, const tensorflow::profiler::XEvent& event) const;

  const HostRoles* roles_;
  const StatNames* names_;
  std::vector<int64_t> operator_keys_;  // Stat ids named like a key written (crafted files).
  std::vector<Signature> by_id_;
};

}  // namespace kineto
}  // namespace exporter
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_EXPORT_KINETO_HOST_STATS_H_
