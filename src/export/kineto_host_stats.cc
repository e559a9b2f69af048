#include "src/export/kineto_host_stats.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "fmt/format.h"
#include "src/export/json_text.h"
#include "src/export/kineto_args.h"
#include "src/xplane/json_reader.h"
#include "src/xplane/schema.h"

namespace neuronprof {
namespace exporter {
namespace kineto {

using tensorflow::profiler::XEvent;
using tensorflow::profiler::XPlane;
using tensorflow::profiler::XStat;
using xplane::PlaneVisitor;

HostStatIds::HostStatIds(const PlaneVisitor& plane)
    : framework(plane.StatId(xplane::kOpFrameworkStat)),
      root_level(plane.StatId(xplane::kRootLevelStat)),
      step_num(plane.StatId(xplane::kStepNumStat)),
      iter_num(plane.StatId(xplane::kIterNumStat)),
      comm_id(plane.StatId(xplane::kCommIdStat)),
      collective(plane.StatId(xplane::kCollectiveStat)),
      comm_nelems(plane.StatId(xplane::kCommNelemsStat)),
      comm_out_nelems(plane.StatId(xplane::kCommOutNelemsStat)),
      world_size(plane.StatId(xplane::kWorldSizeStat)),
      comm_dtype(plane.StatId(xplane::kCommDtypeStat)),
      input_dims(plane.StatId(xplane::kOpInputDimsStat)),
      input_types(plane.StatId(xplane::kOpInputTypesStat)),
      input_values(plane.StatId(xplane::kOpInputValuesStat)),
      sequence(plane.StatId(xplane::kOpSequenceStat)),
      fwd_thread(plane.StatId(xplane::kOpForwardThreadStat)),
      direction(plane.StatId(xplane::kOpDirectionStat)),
      memory_device_type(plane.StatId(xplane::kMemoryDeviceTypeStat)),
      allocator(plane.StatId(xplane::kAllocatorNameStat)),
      allocation_bytes(plane.StatId(xplane::kAllocationBytesStat)),
      requested_bytes(plane.StatId(xplane::kRequestedBytesStat)),
      device_id(plane.StatId(xplane::kDeviceIdStat)),
      address(plane.StatId(xplane::kAddressStat)),
      bytes_allocated(plane.StatId(xplane::kBytesAllocatedStat)),
      pool_reserved(plane.StatId(xplane::kPoolReservedStat)),
      instant(plane.StatId(xplane::kInstantStat)),
      stack(plane.StatId(xplane::kStackStat)) {}

HostRoles::HostRoles(const XPlane& plane, const HostStatIds& ids) {
  const size_t stat_metadata = static_cast<size_t>(plane.stat_metadata_size());
  ids_ = {ids.framework,
          ids.root_level,
          ids.step_num,
          ids.iter_num,
          ids.comm_id,
          ids.collective,
          ids.comm_nelems,
          ids.comm_out_nelems,
          ids.world_size,
          ids.comm_dtype,
          ids.input_dims,
          ids.input_types,
          ids.input_values,
          ids.sequence,
          ids.fwd_thread,
          ids.direction,
          ids.memory_device_type,
          ids.allocator,
          ids.allocation_bytes,
          ids.requested_bytes,
          ids.device_id,
          ids.address,
          ids.bytes_allocated,
          ids.pool_reserved,
          ids.instant,
          ids.stack};
  // A table by id when the ids are small (the usual: ids count from 1);
  // a crafted plane's huge ids are compared one by one instead.
  int64_t top = -1;
  for (int64_t id : ids_) top = std::max(top, id);
  if (top >= static_cast<int64_t>(DenseIdLimit(stat_metadata))) return;
  by_id_.assign(static_cast<size_t>(top + 1), kNoRole);
  for (size_t role = 0; role < ids_.size(); ++role) {
    if (ids_[role] >= 0) by_id_[static_cast<size_t>(ids_[role])] = static_cast<uint8_t>(role);
  }
  dense_ = true;
}

HostMetadata::HostMetadata(const PlaneVisitor& plane, const HostRoles& roles) : plane_(&plane) {
  const auto& metadata = plane.raw().event_metadata();
  dense_.resize(DenseTableSize(metadata));
  for (const auto& [id, event] : metadata) {
    if (id >= 0 && static_cast<uint64_t>(id) < dense_.size()) {
      dense_[static_cast<size_t>(id)] = &event;
    }
    for (const XStat& stat : event.stats()) {
      const uint8_t role = roles.Of(stat.metadata_id());
      if (role != kInputDims && role != kInputTypes && role != kInputValues) continue;
      const std::optional<std::string_view> text = xplane::StrValue(plane.raw(), &stat);
      if (!text) continue;
      inputs_[&stat] = Translate(static_cast<HostRole>(role), *text);
    }
  }
}

HostMetadata::Inputs HostMetadata::Translate(HostRole role, std::string_view text) {
  Inputs inputs;
  inputs.text = text;
  if (role != kInputTypes) {
    inputs.strict_array = json_reader::IsStrictJsonArray(text);
    return inputs;
  }
  fmt::memory_buffer buffer;
  json::Writer out(std::move(buffer));
  out.Char('[');
  bool first = true;
  for (std::string_view type : kineto::KinetoInputTypes(text)) {
    if (!first) out.Char(',');
    first = false;
    out.String(type);
  }
  out.Char(']');
  inputs.types = std::string(out.text());
  return inputs;
}

OperatorSignatures::OperatorSignatures(const PlaneVisitor& plane, const HostRoles& roles,
                                       const HostMetadata& metadata, const StatNames& names)
    : roles_(&roles), names_(&names) {
  for (const auto& [id, stat] : plane.raw().stat_metadata()) {
    if (IsOperatorKey(stat.name())) operator_keys_.push_back(id);
  }
  for (const auto& [id, event] : plane.raw().event_metadata()) {
    // Dense ids only (a crafted plane's sparse ids take the general path).
    if (!metadata.IsDense(id) || metadata.Find(id) != &event) continue;
    if (static_cast<uint64_t>(id) >= by_id_.size()) by_id_.resize(static_cast<size_t>(id) + 1);
    by_id_[static_cast<size_t>(id)] = Make(plane, metadata, event);
  }
}

bool OperatorSignatures::IsOperatorKey(std::string_view name) {
  static constexpr std::string_view kKeys[] = {
      "External id",     "Input Dims",     "Input type", "Concrete Inputs",
      "Sequence number", "Fwd thread id",  "Call stack", "Collective name",
      "In msg nelems",   "Out msg nelems", "Group size", "dtype"};
  return std::find(std::begin(kKeys), std::end(kKeys), name) != std::end(kKeys);
}

OperatorSignatures::Signature OperatorSignatures::Make(
    const PlaneVisitor& plane, const HostMetadata& metadata,
    const tensorflow::profiler::XEventMetadata& event) const {
  Signature signature;
  const XStat* by_role[kHostRoles] = {};
  for (const XStat& stat : event.stats()) {
    const int64_t id = stat.metadata_id();
    const uint8_t role = roles_->Of(id);
    const bool allowed = role == kNoRole || role == kFramework || role == kDirection ||
                         role == kInputDims || role == kInputTypes || role == kInputValues;
    if (id < 0 || !allowed ||
        std::find(signature.ids.begin(), signature.ids.end(), id) != signature.ids.end()) {
      return Signature();  // Repeated or translated otherwise: the general path.
    }
    signature.ids.push_back(id);
    if (role != kNoRole) by_role[role] = &stat;
    const StatNames::Entry* entry = names_->Find(id);
    if (entry == nullptr || entry->name.empty()) continue;
    if (IsOperatorKey(entry->name) ||
        std::find(signature.name_ids.begin(), signature.name_ids.end(), entry->name_id) !=
            signature.name_ids.end()) {
      return Signature();
    }
    signature.name_ids.push_back(entry->name_id);
  }
  // As WriteOperator translates them.
  const auto inputs = [&](HostRole role) -> const HostMetadata::Inputs* {
    return by_role[role] == nullptr ? nullptr : metadata.Cached(by_role[role]);
  };
  absl::InlinedVector<const XStat*, 4> translated;
  if (const auto* dims = inputs(kInputDims); dims && dims->strict_array) {
    signature.inputs += ",\"Input Dims\":";
    signature.inputs += dims->text;
    translated.push_back(by_role[kInputDims]);
  }
  if (const auto* types = inputs(kInputTypes)) {
    signature.inputs += ",\"Input type\":";
    signature.inputs += types->types;
    translated.push_back(by_role[kInputTypes]);
  }
  if (const auto* values = inputs(kInputValues); values && values->strict_array) {
    signature.inputs += ",\"Concrete Inputs\":";
    signature.inputs += values->text;
    translated.push_back(by_role[kInputValues]);
  }
  json::Writer tail{fmt::memory_buffer()};
  for (const XStat& stat : event.stats()) {
    if (roles_->Of(stat.metadata_id()) == kFramework ||
        std::find(translated.begin(), translated.end(), &stat) != translated.end()) {
      continue;
    }
    const StatNames::Entry* entry = names_->Find(stat.metadata_id());
    if (entry == nullptr || entry->name.empty()) continue;
    WriteStatArg(&tail, *entry, xplane::StatVisitor(plane, stat), *names_);
  }
  signature.tail = std::string(tail.text());
  signature.usable = true;
  return signature;
}

bool OperatorSignatures::Fits(const Signature& signature, const XEvent& event) const {
  absl::InlinedVector<int64_t, 8> own_names;
  for (const XStat& stat : event.stats()) {
    const int64_t id = stat.metadata_id();
    if (std::find(signature.ids.begin(), signature.ids.end(), id) != signature.ids.end()) {
      return false;
    }
    const uint8_t role = roles_->Of(id);
    if (role == kSequence) continue;  // Written translated, never passed through.
    if (role == kFwdThread) {
      if (!xplane::IntValue(&stat)) return false;
      continue;
    }
    if (role != kNoRole && role != kDirection) return false;
    const StatNames::Entry* entry = names_->Find(id);
    if (entry == nullptr || entry->name.empty()) continue;
    if (std::find(operator_keys_.begin(), operator_keys_.end(), id) != operator_keys_.end() ||
        std::find(signature.name_ids.begin(), signature.name_ids.end(), entry->name_id) !=
            signature.name_ids.end() ||
        std::find(own_names.begin(), own_names.end(), entry->name_id) != own_names.end()) {
      return false;
    }
    own_names.push_back(entry->name_id);
  }
  return true;
}

}  // namespace kineto
}  // namespace exporter
}  // namespace neuronprof
