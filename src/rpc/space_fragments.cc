// The XSpace's bytes are read once without parsing events: every field but
// the events is copied aside (a plane's metadata, a line's fields: small)
// and each event's bytes are assigned to a fragment, consecutive events of
// a line in one fragment making one segment. Each fragment is then parsed
// segment by segment into a skeleton of every plane and line, whose event
// objects protobuf reuses once they are cleared.
#include "src/rpc/space_fragments.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <algorithm>
#include <climits>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "src/rpc/wire_fields.h"

namespace neuronprof {
namespace rpc {
namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;
using tensorflow::profiler::XLine;
using tensorflow::profiler::XSpace;

// Consecutive events of one line, all in one fragment.
struct Segment {
  int plane;
  int line;
  int fragment;
  int64_t offset;  // Within the XSpace's bytes, of the first event's tag.
  int64_t size;
};

// What the read of the bytes found: the fields that are not events, by
// message, and where each event goes.
struct SpaceLayout {
  std::string space_fields;  // errors, warnings, hostnames
  struct Plane {
    std::string fields;              // All but its lines.
    std::vector<std::string> lines;  // Each line's fields but its events.
  };
  std::vector<Plane> planes;
  std::vector<Segment> segments;  // In fragment order.
  int fragments = 1;
};

class LayoutReader {
 public:
  LayoutReader(const BytePieces& bytes, int max_events)
      : bytes_(bytes), max_events_(std::max(max_events, 1)) {}

  bool Read(int64_t size, SpaceLayout* layout) {
    if (size > INT_MAX) return false;
    layout_ = layout;
    PiecesStream stream(bytes_);
    CodedInputStream in(&stream);
    return ReadFields(in, static_cast<uint32_t>(size), [&](uint32_t tag, int64_t start) {
      if (tag != LengthDelimitedTag(1)) return Keep(in, tag, start, &layout_->space_fields);
      layout_->planes.emplace_back();
      return ReadMessageFields(in, [&](uint32_t plane_tag, int64_t field_start) {
        SpaceLayout::Plane& plane = layout_->planes.back();
        if (plane_tag != LengthDelimitedTag(3)) {
          return Keep(in, plane_tag, field_start, &plane.fields);
        }
        plane.lines.emplace_back();
        return ReadMessageFields(in, [&](uint32_t line_tag, int64_t line_start) {
          if (line_tag != LengthDelimitedTag(4)) {
            return Keep(in, line_tag, line_start, &layout_->planes.back().lines.back());
          }
          uint32_t event_size = 0;
          if (!in.ReadVarint32(&event_size) || !in.Skip(static_cast<int>(event_size))) {
            return false;
          }
          AddEvent(line_start, in.CurrentPosition());
          return true;
        });
      });
    });
  }

 private:
  // Skips the field and appends its bytes, tag included, to `kept`.
  bool Keep(CodedInputStream& in, uint32_t tag, int64_t start, std::string* kept) {
    if (!WireFormatLite::SkipField(&in, tag)) return false;
    for (std::string_view piece : SubPieces(bytes_, start, in.CurrentPosition() - start)) {
      kept->append(piece);
    }
    return true;
  }

  void AddEvent(int64_t start, int64_t end) {
    if (in_fragment_ == max_events_) {
      ++layout_->fragments;
      in_fragment_ = 0;
    }
    ++in_fragment_;
    const int plane = static_cast<int>(layout_->planes.size()) - 1;
    const int line = static_cast<int>(layout_->planes.back().lines.size()) - 1;
    const int fragment = layout_->fragments - 1;
    std::vector<Segment>& segments = layout_->segments;
    if (!segments.empty()) {
      Segment& last = segments.back();
      if (last.plane == plane && last.line == line && last.fragment == fragment &&
          last.offset + last.size == start) {
        last.size = end - last.offset;
        return;
      }
    }
    segments.push_back({plane, line, fragment, start, end - start});
  }

  const BytePieces& bytes_;
  const int max_events_;
  SpaceLayout* layout_ = nullptr;
  int in_fragment_ = 0;
};

// Every plane and line of `layout` without events.
bool BuildSkeleton(const SpaceLayout& layout, XSpace* space) {
  if (!space->ParseFromString(layout.space_fields)) return false;
  for (const SpaceLayout::Plane& plane : layout.planes) {
    tensorflow::profiler::XPlane* built = space->add_planes();
    if (!built->ParseFromString(plane.fields)) return false;
    for (const std::string& line : plane.lines) {
      if (!built->add_lines()->ParseFromString(line)) return false;
    }
  }
  return true;
}

// Appends the segment's events to `line`.
bool ParseSegment(const BytePieces& bytes, const Segment& segment, XLine* line) {
  const BytePieces pieces = SubPieces(bytes, segment.offset, segment.size);
  PiecesStream stream(pieces);
  return line->MergeFromBoundedZeroCopyStream(&stream, static_cast<int>(segment.size));
}

// One fragment being filled or written: a skeleton whose lines get the
// fragment's events.
struct FragmentSlot {
  XSpace space;
  std::vector<XLine*> filled;  // Lines with events, emptied before reuse.
};

// Fills `slot` with the events of `fragment`; `next` is the first of its
// segments in `layout`, and is moved past them.
bool FillFragment(const BytePieces& bytes, const SpaceLayout& layout, int fragment, size_t* next,
                  FragmentSlot* slot) {
  for (XLine* line : slot->filled) line->mutable_events()->Clear();  // Kept for reuse.
  slot->filled.clear();
  for (; *next < layout.segments.size() && layout.segments[*next].fragment == fragment; ++*next) {
    const Segment& segment = layout.segments[*next];
    XLine* line = slot->space.mutable_planes(segment.plane)->mutable_lines(segment.line);
    if (!ParseSegment(bytes, segment, line)) return false;
    slot->filled.push_back(line);
  }
  return true;
}

absl::Status NotAnEvent() {
  return absl::DataLossError("the profile holds an event that is not an XEvent");
}

// Parses fragment f + 1 on a thread of its own while `ready` writes
// fragment f, into two slots taken in turn.
class FragmentPipeline {
 public:
  FragmentPipeline(const BytePieces& bytes, const SpaceLayout& layout, const XSpace& skeleton)
      : bytes_(bytes), layout_(layout) {
    for (FragmentSlot& slot : slots_) slot.space = skeleton;
  }

  absl::Status Run(const std::function<absl::Status(const XSpace&)>& ready) {
    std::thread parser([this] { Parse(); });
    absl::Status status;
    for (int f = 0; f < layout_.fragments && status.ok(); ++f) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return parsed_ > f || failed_; });
        if (parsed_ <= f) status = NotAnEvent();
      }
      if (status.ok()) status = ready(slots_[f % 2].space);
      std::lock_guard<std::mutex> lock(mutex_);
      written_ = f + 1;
      stop_ = !status.ok();
      changed_.notify_all();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      changed_.notify_all();
    }
    parser.join();
    return status;
  }

 private:
  void Parse() {
    size_t next = 0;
    for (int f = 0; f < layout_.fragments; ++f) {
      {
        // The slot is free once the fragment two before this one is written.
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return stop_ || f - written_ < 2; });
        if (stop_) return;
      }
      const bool parsed = FillFragment(bytes_, layout_, f, &next, &slots_[f % 2]);
      std::lock_guard<std::mutex> lock(mutex_);
      if (parsed) parsed_ = f + 1;
      failed_ = !parsed;
      changed_.notify_all();
      if (!parsed) return;
    }
  }

  const BytePieces& bytes_;
  const SpaceLayout& layout_;
  FragmentSlot slots_[2];
  std::mutex mutex_;
  std::condition_variable changed_;
  int parsed_ = 0;   // Fragments parsed.
  int written_ = 0;  // Fragments `ready` returned from.
  bool failed_ = false;
  bool stop_ = false;
};

}  // namespace

absl::Status ForEachSpaceFragment(const BytePieces& xspace, int max_events,
                                  const std::function<absl::Status(const XSpace&)>& ready) {
  int64_t size = 0;
  for (std::string_view piece : xspace) size += static_cast<int64_t>(piece.size());
  SpaceLayout layout;
  FragmentSlot slot;
  if (!LayoutReader(xspace, max_events).Read(size, &layout) ||
      !BuildSkeleton(layout, &slot.space)) {
    return absl::DataLossError("the profile is not a well-formed XSpace");
  }
  if (layout.fragments > 1) return FragmentPipeline(xspace, layout, slot.space).Run(ready);
  size_t next = 0;
  if (!FillFragment(xspace, layout, 0, &next, &slot)) return NotAnEvent();
  return ready(slot.space);
}

}  // namespace rpc
}  // namespace neuronprof
