// The XSpace reader's rewrite of map entries (src/export/map_entry_rewrite.h):
// protobuf 3.21 inserts and erases the key of an entry that goes on after
// its value, with a scan of its table each time (quadratic on a crafted
// capture); the reader hands protobuf no such entry, and what the parse
// yields is unchanged. Counted with protobuf's own wire reader, not timed.
#include "src/export/map_entry_rewrite.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <catch2/catch.hpp>

#include "src/export/xspace_file.h"
#include "tests/export/map_churn.h"

namespace neuronprof {
namespace exporter {
namespace {

using tensorflow::profiler::XSpace;
using testing::ChurningEntries;
using testing::DeterministicBytes;

// What protobuf itself makes of `bytes`, for comparison.
std::string ProtobufParse(const std::string& bytes) {
  XSpace space;
  REQUIRE(space.ParseFromString(bytes));
  return DeterministicBytes(space);
}

TEST_CASE("entries that insert and erase a key reach protobuf as key, then value") {
  constexpr int kHeld = 2000;
  constexpr int kChurn = 20000;
  const std::string crafted = testing::ChurningStatMetadata(kHeld, kChurn);
  REQUIRE(ChurningEntries(crafted) == kChurn);
  const auto canonical = CanonicalMapEntries(crafted);
  REQUIRE(canonical.ok());
  REQUIRE(canonical->has_value());
  CHECK(ChurningEntries(**canonical) == 0);
  CHECK((*canonical)->size() <= crafted.size());
  // The reader's parse is protobuf's own, entry for entry.
  const auto space = ParseXSpace(crafted, "crafted");
  REQUIRE(space.ok());
  CHECK(DeterministicBytes(*space) == ProtobufParse(crafted));
  const auto& metadata = space->planes(0).stat_metadata();
  CHECK(metadata.size() == kHeld);
  const auto& churned = metadata.at(testing::kChurnKey);
  CHECK(churned.id() == kChurn);
  CHECK(churned.name() == "churn_" + std::to_string(kChurn - 1));
  CHECK(churned.description() == "d");
  CHECK(metadata.at(int64_t{2} << 48).name() == "held_2");
}

TEST_CASE("entries protobuf parses with one insert are kept, and so is the file") {
  XSpace space;
  auto* plane = space.add_planes();
  (*plane->mutable_stat_metadata())[7].set_name("seven");
  (*plane->mutable_event_metadata())[-3].set_name("minus three");
  plane->add_lines()->add_events()->set_metadata_id(-3);
  const std::string plain = space.SerializeAsString();
  const auto canonical = CanonicalMapEntries(plain);
  REQUIRE(canonical.ok());
  CHECK_FALSE(canonical->has_value());
  // Odd but harmless shapes: value first, an unknown field between key and
  // value, a key alone, an empty entry, a repeated key before the value.
  std::string odd;
  testing::AppendBytesField(5, std::string("\x12\x02\x08\x01\x08\x01", 6), &odd);
  testing::AppendBytesField(5,
                            std::string("\x08\x02\x25"
                                        "abcd"
                                        "\x12\x00",
                                        9),
                            &odd);
  testing::AppendBytesField(5, std::string("\x08\x03", 2), &odd);
  testing::AppendBytesField(5, "", &odd);
  testing::AppendBytesField(4, std::string("\x08\x04\x08\x05\x12\x02\x10\x01", 8), &odd);
  std::string odd_space;
  testing::AppendBytesField(1, odd, &odd_space);
  const auto kept = CanonicalMapEntries(odd_space);
  REQUIRE(kept.ok());
  CHECK_FALSE(kept->has_value());
}

TEST_CASE("every way an entry can go on after its value parses as protobuf parses it") {
  std::string plane;
  // A second value merges into the first; a later key wins; unknown fields,
  // a group and a repeated key are dropped as protobuf drops them.
  testing::AppendBytesField(5,
                            std::string("\x08\x01\x12\x03\x12\x01x"
                                        "\x12\x02\x1a\x00"
                                        "\x08\x09",
                                        13),
                            &plane);
  testing::AppendBytesField(5,
                            std::string("\x08\x02\x12\x00"
                                        "\x1b\x08\x01\x1c",
                                        8),
                            &plane);
  testing::AppendBytesField(4,
                            std::string("\x08\x03\x12\x03\x12\x01x"
                                        "\x08\x03"
                                        "\x15zzzz",
                                        14),
                            &plane);
  std::string space_bytes;
  testing::AppendBytesField(1, plane, &space_bytes);
  REQUIRE(ChurningEntries(space_bytes) == 3);
  const auto canonical = CanonicalMapEntries(space_bytes);
  REQUIRE(canonical.ok());
  REQUIRE(canonical->has_value());
  CHECK(ChurningEntries(**canonical) == 0);
  const auto space = ParseXSpace(space_bytes, "odd");
  REQUIRE(space.ok());
  CHECK(DeterministicBytes(*space) == ProtobufParse(space_bytes));
  CHECK(space->planes(0).stat_metadata().at(9).name() == "x");
  CHECK(space->planes(0).stat_metadata().count(1) == 0);
  CHECK(space->planes(0).event_metadata().at(3).name() == "x");
}

TEST_CASE("bytes that are not protobuf wire format are refused, as protobuf refuses them") {
  for (const std::string& bad :
       {std::string("\x0a\x05\x2a\x03\x08\x01", 6),          // a plane longer than the file
        std::string("\x0a\x04\x2a\x02\x08\xff", 6),          // a cut varint
        std::string("\x0a\x06\x2a\x04\x08\x01\x0b\x14", 8),  // a group ended by another
        std::string("\x0a\x02\x2a\x00\x0c", 5)}) {           // an end without a group
    INFO("bytes " << bad.size());
    CHECK_FALSE(CanonicalMapEntries(bad).ok());
    XSpace space;
    CHECK_FALSE(space.ParseFromString(bad));
    CHECK_FALSE(ParseXSpace(bad, "bad").ok());
  }
}

}  // namespace
}  // namespace exporter
}  // namespace neuronprof
