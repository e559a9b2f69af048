// Strings in the XSpace: every protobuf `string` field the builders fill
// holds valid UTF-8, ill-formed bytes replaced by U+FFFD per maximal
// subpart, so the file parses in every protobuf reader.
#include <catch2/catch.hpp>
#include <string>

#include "src/xplane/schema.h"
#include "src/xplane/utf8.h"
#include "src/xplane/xplane_builder.h"

namespace neuronprof {
namespace {

constexpr char kFffd[] = "\xEF\xBF\xBD";

std::string Fffd(int count) {
  std::string out;
  for (int i = 0; i < count; ++i) out += kFffd;
  return out;
}

TEST_CASE("utf8: valid text is kept as is, without a copy") {
  const std::string text = "ascii \xC3\xA9 \xE2\x82\xAC \xF0\x9D\x84\x9E \xF4\x8F\xBF\xBF";
  std::string scratch;
  const std::string_view valid = utf8::Valid(text, &scratch);
  CHECK(utf8::IsValid(text));
  CHECK(valid.data() == text.data());
  CHECK(valid.size() == text.size());
  CHECK(utf8::IsValid(""));
}

TEST_CASE("utf8: one U+FFFD per maximal subpart, as Unicode and WHATWG decoders") {
  // Unicode 15, table 3-8, the standard's own example.
  CHECK(utf8::ToValid("\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64") ==
        "a" + Fffd(3) + "b" + Fffd(1) + "c" + Fffd(2) + "d");
  // Bytes that never start a sequence.
  CHECK(utf8::ToValid("\xC0\xAF") == Fffd(2));  // Overlong '/'.
  CHECK(utf8::ToValid("\xC1\xBF") == Fffd(2));
  CHECK(utf8::ToValid("\xF5\x80\x80\x80") == Fffd(4));
  CHECK(utf8::ToValid("\xFF\xFE") == Fffd(2));
  // Second bytes out of range: overlongs, surrogates, past U+10FFFF.
  CHECK(utf8::ToValid("\xE0\x80\xAF") == Fffd(3));
  CHECK(utf8::ToValid("\xED\xA0\x80") == Fffd(3));  // U+D800.
  CHECK(utf8::ToValid("\xED\xBF\xBF") == Fffd(3));  // U+DFFF.
  CHECK(utf8::ToValid("\xF0\x80\x80\xAF") == Fffd(4));
  CHECK(utf8::ToValid("\xF4\x90\x80\x80") == Fffd(4));  // U+110000.
  // A truncated sequence is one subpart, whatever follows.
  CHECK(utf8::ToValid("\xE2\x82") == Fffd(1));
  CHECK(utf8::ToValid("x\xF0\x9D\x84y") == "x" + Fffd(1) + "y");
  CHECK(utf8::ToValid("\xE2\x82\xE2\x82\xAC") == Fffd(1) + "\xE2\x82\xAC");
  // NUL and control characters are valid UTF-8 (JSON escapes them).
  CHECK(utf8::ToValid(std::string("a\0\x01", 3)) == std::string("a\0\x01", 3));
}

TEST_CASE("xplane builder: every string field it fills is valid UTF-8") {
  const std::string bad = "bad\xFF\xC3(";  // A stray byte and a cut sequence.
  const std::string fixed = "bad" + Fffd(2) + "(";
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder plane(xplane::FindOrAddPlane(&space, "/host:" + bad));
  auto* line = plane.AddLine(1, "thread " + bad, 0);
  auto* event = plane.AddEvent(line, plane.EventMetadataId("event " + bad), 0, 1000);
  plane.AddStat(event, "key " + bad, std::string_view("value " + bad));
  plane.AddRefStat(event, "ref", "interned " + bad);
  plane.AddPlaneStat("plane " + bad, std::string_view("plane value " + bad));
  xplane::AddWarning(&space, "warning " + bad);
  xplane::AddError(&space, "error " + bad);

  std::string wire;
  REQUIRE(space.SerializeToString(&wire));
  tensorflow::profiler::XSpace read;
  // proto3 parsing refuses ill-formed UTF-8 in string fields.
  REQUIRE(read.ParseFromString(wire));
  REQUIRE(read.planes_size() == 1);
  const auto& p = read.planes(0);
  CHECK(p.name() == "/host:" + fixed);
  CHECK(p.lines(0).name() == "thread " + fixed);
  CHECK(p.event_metadata().at(p.lines(0).events(0).metadata_id()).name() == "event " + fixed);
  const auto& stats = p.lines(0).events(0).stats();
  CHECK(p.stat_metadata().at(stats[0].metadata_id()).name() == "key " + fixed);
  CHECK(stats[0].str_value() == "value " + fixed);
  CHECK(p.stat_metadata().at(static_cast<int64_t>(stats[1].ref_value())).name() ==
        "interned " + fixed);
  CHECK(p.stat_metadata().at(p.stats(0).metadata_id()).name() == "plane " + fixed);
  CHECK(p.stats(0).str_value() == "plane value " + fixed);
  CHECK(read.warnings(0) == "warning " + fixed);
  CHECK(read.errors(0) == "error " + fixed);
}

TEST_CASE("xplane builder: names equal once repaired share one metadata entry") {
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder plane(xplane::FindOrAddPlane(&space, "p\xFF"));
  CHECK(xplane::FindOrAddPlane(&space, "p\xFE") == plane.plane());
  CHECK(plane.EventMetadataId("a\xFF") == plane.EventMetadataId("a\xFE"));
  CHECK(plane.EventMetadataId("a\xFF") == plane.EventMetadataId("a" + Fffd(1)));
  CHECK(plane.plane()->event_metadata_size() == 1);
  // A re-created builder finds the repaired name.
  xplane::XPlaneBuilder again(plane.plane());
  CHECK(again.EventMetadataId("a\xC3") == plane.EventMetadataId("a\xFF"));
}

}  // namespace
}  // namespace neuronprof
