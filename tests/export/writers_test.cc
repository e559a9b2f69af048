// Writers: atomic files, the JSON writer, Chrome trace JSON and the logdir
// layout (gzip: gzip_test.cc).
#include <dirent.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <limits>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/export/atomic_file.h"
#include "src/export/chrome_trace.h"
#include "src/export/gzip.h"
#include "src/export/json_text.h"
#include "src/export/logdir.h"
#include "src/xplane/schema.h"
#include "src/xplane/stat_lookup.h"
#include "src/xplane/xplane_builder.h"
#include "src/xplane/xplane_visitor.h"
#include "tests/export/file_size_limit.h"
#include "tests/export/hostile_space.h"
#include "tests/export/memory_space.h"
#include "tests/export/strict_json.h"
#include "tests/export/trace_text.h"
#include "tests/test_util.h"

namespace neuronprof {
namespace {

using testing::ListDir;
using testing::TempDir;

TEST_CASE("stat values: one integer and string rule, the same for the exports and the analysis") {
  using tensorflow::profiler::XStat;
  tensorflow::profiler::XPlane plane;
  auto* event = plane.add_lines()->add_events();
  int64_t next_id = 1;
  auto add = [&](const char* name) {
    (*plane.mutable_stat_metadata())[next_id].set_id(next_id);
    (*plane.mutable_stat_metadata())[next_id].set_name(name);
    XStat* stat = event->add_stats();
    stat->set_metadata_id(next_id++);
    return stat;
  };
  add("int64")->set_int64_value(-7);
  add("uint64")->set_uint64_value(42);
  add("uint64_past_int64")->set_uint64_value(uint64_t{1} << 63);
  add("double")->set_double_value(-2.9);
  add("double_past_int64")->set_double_value(1e19);
  add("nan")->set_double_value(std::numeric_limits<double>::quiet_NaN());
  add("decimal")->set_str_value("123");
  add("not_decimal")->set_str_value("12x");
  add("bytes")->set_bytes_value("\x01");
  XStat* ref = add("ref");
  ref->set_ref_value(1);  // Names stat metadata 1, "int64".
  const std::vector<std::pair<const char*, std::optional<int64_t>>> ints = {
      {"int64", -7},
      {"uint64", 42},
      {"uint64_past_int64", std::nullopt},
      {"double", -2},
      {"double_past_int64", std::nullopt},
      {"nan", std::nullopt},
      {"decimal", 123},
      {"not_decimal", std::nullopt},
      {"bytes", std::nullopt},
      {"ref", std::nullopt},
      {"absent", std::nullopt}};
  const xplane::PlaneVisitor visitor(plane);
  const xplane::EventVisitor stats = visitor.Line(0).Event(0);
  for (const auto& [name, expected] : ints) {
    INFO(name);
    CHECK(stats.IntStatNamed(name) == expected);
  }
  CHECK(stats.StrStatNamed("ref") == std::optional<std::string_view>("int64"));
  CHECK(stats.StrStatNamed("decimal") == std::optional<std::string_view>("123"));
  CHECK_FALSE(stats.StrStatNamed("int64").has_value());
  CHECK_FALSE(xplane::StrValue(plane, nullptr).has_value());
}

TEST_CASE("atomic writes replace the file whole and leave no temp files") {
  TempDir dir;
  const std::string path = dir.path() + "/a.bin";
  REQUIRE(exporter::WriteFileAtomically(path, "first").ok());
  REQUIRE(exporter::WriteFileAtomically(path, std::string(1 << 20, 'x')).ok());
  auto data = exporter::ReadFile(path);
  REQUIRE(data.ok());
  CHECK(data->size() == (1u << 20));
  CHECK(ListDir(dir.path()) == std::vector<std::string>{"a.bin"});
}

TEST_CASE("unwritable destinations give errors that name the path") {
  TempDir dir;
  const std::string file = dir.path() + "/plain_file";
  REQUIRE(exporter::WriteFileAtomically(file, "x").ok());
  // A regular file where a directory should be: fails even for root.
  absl::Status written = exporter::WriteFileAtomically(file + "/inside.pb", "x");
  CHECK_FALSE(written.ok());
  CHECK(std::string(written.message()).find(file) != std::string::npos);
  absl::Status made = exporter::MakeDirectories(file + "/sub/dir");
  CHECK_FALSE(made.ok());
  CHECK(std::string(made.message()).find("plain_file") != std::string::npos);
}

tensorflow::profiler::XSpace SampleSpace() {
  tensorflow::profiler::XSpace space;
  xplane::SetProfileTimes(&space, 1700000000123456789, 1700000001000000000);
  xplane::XPlaneBuilder plane(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  auto* line = plane.AddLine(42, "main \"thread\"", 1000);
  auto* event = plane.AddEvent(line, plane.EventMetadataId("step\n1"), 2500000, 1234567);
  plane.AddStat(event, "step_num", int64_t{3});
  plane.AddStat(event, "label", std::string_view("a\"b"));
  plane.AddStat(event, "ratio", 0.5);
  return space;
}

TEST_CASE("Chrome trace JSON has exact relative microseconds and escaped text") {
  const std::string json = testing::ChromeTraceText(SampleSpace());
  CHECK(json.find("\"baseTimeNanoseconds\":1700000000123456789,") != std::string::npos);
  // Line at 1000 ns + event offset 2500 ns from the profile start.
  CHECK(json.find("\"ts\":3.500,") != std::string::npos);
  CHECK(json.find("\"dur\":1.234") != std::string::npos);
  CHECK(json.find("\"name\":\"step\\n1\"") != std::string::npos);
  CHECK(json.find("\"args\":{\"step_num\":3,\"label\":\"a\\\"b\",\"ratio\":0.5}") !=
        std::string::npos);
  CHECK(json.find(
            "\"thread_name\",\"pid\":2,\"tid\":42,\"args\":{\"name\":\"main \\\"thread\\\"\"}") !=
        std::string::npos);
  CHECK(json.find("\"process_name\",\"pid\":2,\"args\":{\"name\":\"/host:CPU\"}") !=
        std::string::npos);
}

// Chrome trace events by (ph, name).
std::vector<const google::protobuf::Struct*> ChromeEvents(const google::protobuf::Struct& root,
                                                          const std::string& ph,
                                                          const std::string& name) {
  std::vector<const google::protobuf::Struct*> found;
  for (const auto& value : root.fields().at("traceEvents").list_value().values()) {
    const auto& fields = value.struct_value().fields();
    if (fields.at("ph").string_value() == ph && fields.count("name") &&
        fields.at("name").string_value() == name) {
      found.push_back(&value.struct_value());
    }
  }
  return found;
}

std::string Warnings(const google::protobuf::Struct& root) {
  const auto* last = ChromeEvents(root, "M", "neuronprof").at(0);
  std::string all;
  for (const auto& w :
       last->fields().at("args").struct_value().fields().at("warnings").list_value().values()) {
    all += w.string_value() + "\n";
  }
  return all;
}

TEST_CASE("Chrome trace JSON is strict: U+FFFD for bad UTF-8, escapes, null for NaN") {
  using testing::kBadUtf8Repaired;
  using testing::kControlChars;
  const std::string json = testing::ChromeTraceText(testing::HostileStringsSpace());
  const google::protobuf::Struct root = testing::ParseStrictJson(json);
  const auto markers = ChromeEvents(root, "X", "marker " + kBadUtf8Repaired + kControlChars);
  REQUIRE(markers.size() == 1);
  const auto& args = markers[0]->fields().at("args").struct_value().fields();
  CHECK(args.at("text").string_value() == kBadUtf8Repaired + kControlChars);
  for (const char* key : {"nan", "inf", "minus_inf"}) {
    INFO(key);
    CHECK(args.at(key).kind_case() == google::protobuf::Value::kNullValue);
  }
  CHECK(args.at("label " + kBadUtf8Repaired).number_value() == 1);
  CHECK(json.find("\\u0001\\u001f\x7f") != std::string::npos);  // DEL is no control.
  CHECK(ChromeEvents(root, "M", "thread_name")
            .at(0)
            ->fields()
            .at("args")
            .struct_value()
            .fields()
            .at("name")
            .string_value() == "main " + kBadUtf8Repaired);
  CHECK(Warnings(root).find("warning " + kBadUtf8Repaired) != std::string::npos);
}

TEST_CASE("JSON micros are exact for every int64 ns, INT64_MIN included") {
  auto micros = [](int64_t ns) {
    exporter::StringSink out;
    exporter::json::Writer writer(&out);
    writer.Micros(ns);
    REQUIRE(writer.Finish().ok());
    return out.text();
  };
  CHECK(micros(1234) == "1.234");
  CHECK(micros(-5) == "-0.005");
  CHECK(micros(0) == "0.000");
  CHECK(micros(std::numeric_limits<int64_t>::max()) == "9223372036854775.807");
  CHECK(micros(std::numeric_limits<int64_t>::min()) == "-9223372036854775.808");
}

TEST_CASE("JSON numbers: NaN and infinities are null, doubles read back the same") {
  auto text = [](double value) {
    exporter::StringSink out;
    exporter::json::Writer writer(&out);
    writer.Double(value);
    REQUIRE(writer.Finish().ok());
    return out.text();
  };
  CHECK(text(std::numeric_limits<double>::quiet_NaN()) == "null");
  CHECK(text(-std::numeric_limits<double>::quiet_NaN()) == "null");
  CHECK(text(std::numeric_limits<double>::infinity()) == "null");
  CHECK(text(-std::numeric_limits<double>::infinity()) == "null");
  CHECK(text(0.1) == "0.1");
  CHECK(text(-2.5) == "-2.5");
  for (double value : {0.1, 1e300, -1e-300, 123456789.125, 5e-324}) {
    INFO(value);
    const std::string json = text(value);
    REQUIRE(json_reader::IsStrictJson(json));
    CHECK(std::strtod(json.c_str(), nullptr) == value);
  }
}

TEST_CASE("Chrome trace: int64 extremes in times are exact or left out and counted") {
  const std::string json = testing::ChromeTraceText(testing::ExtremeTimesSpace());
  const google::protobuf::Struct root = testing::ParseStrictJson(json);
  CHECK(ChromeEvents(root, "X", "edge_max").size() == 3);
  CHECK(ChromeEvents(root, "X", "edge_min").size() == 3);
  for (const char* name : {"overflow_offset", "overflow_end", "overflow_offset_low", "negative"}) {
    INFO(name);
    CHECK(ChromeEvents(root, "X", name).empty());
  }
  CHECK(json.find("\"ts\":9223372036854775.807,\"dur\":0.000") != std::string::npos);
  CHECK(json.find("\"ts\":-9223372036854775.808,\"dur\":9223372036854.775") != std::string::npos);
  CHECK(Warnings(root).find(absl::StrCat("left out ", testing::kExtremeTimesLeftOut, " events")) !=
        std::string::npos);
}

TEST_CASE("plain names keep network and user input out of paths") {
  CHECK(exporter::IsPlainName("2026_11_22_10_00_00"));
  CHECK(exporter::IsPlainName("host-1.example"));
  CHECK_FALSE(exporter::IsPlainName(""));
  CHECK_FALSE(exporter::IsPlainName("."));
  CHECK_FALSE(exporter::IsPlainName(".."));
  CHECK_FALSE(exporter::IsPlainName("../etc"));
  CHECK_FALSE(exporter::IsPlainName("a/b"));
  CHECK_FALSE(exporter::IsPlainName("a b"));
  CHECK(exporter::ToPlainName("my host/1") == "my_host_1");
  CHECK(absl::IsInvalidArgument(exporter::CheckPlainName("a/b", "run_name")));
}

TEST_CASE("run directories are sortable timestamps and stay unique") {
  TempDir dir;
  const int64_t when = 1700000000123456789;  // .123 s
  auto first = exporter::CreateRunDirectory(dir.path(), "", when);
  auto second = exporter::CreateRunDirectory(dir.path(), "", when);
  auto third = exporter::CreateRunDirectory(dir.path(), "", when);
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  REQUIRE(third.ok());
  const std::string root = dir.path() + "/plugins/profile/";
  const std::string base = exporter::RunNameForTime(when);
  CHECK(std::regex_match(base, std::regex(R"(\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d)")));
  CHECK(*first == root + base);
  CHECK(*second == root + base + "_123");
  CHECK(*third == root + base + "_123_2");

  auto named = exporter::CreateRunDirectory(dir.path(), "my_run", when);
  REQUIRE(named.ok());
  CHECK(*named == root + "my_run");
  CHECK(absl::IsAlreadyExists(exporter::CreateRunDirectory(dir.path(), "my_run", when).status()));
}

TEST_CASE("profile files land under the run directory") {
  TempDir dir;
  auto files = exporter::WriteProfileFiles(SampleSpace(), dir.path(), "myhost", {});
  REQUIRE(files.ok());
  CHECK(ListDir(dir.path()) ==
        std::vector<std::string>{"myhost.trace.json.gz", "myhost.xplane.pb"});
  auto space = testing::ReadXSpace(dir.path() + "/myhost.xplane.pb");
  REQUIRE(xplane::FindPlane(space, xplane::kHostPlaneName) != nullptr);
  CHECK(xplane::ProfileStartEpochNs(space) == 1700000000123456789);
  auto gz = exporter::ReadFile(dir.path() + "/myhost.trace.json.gz");
  REQUIRE(gz.ok());
  auto json = exporter::GzipDecompress(*gz);
  REQUIRE(json.ok());
  CHECK(json->find("\"traceEvents\"") != std::string::npos);
}

// Events numbered by their "i" stat, on two threads, many times the
// writer's buffer and the gzip block.
tensorflow::profiler::XSpace LargeSpace(int events) {
  tensorflow::profiler::XSpace space;
  xplane::SetProfileTimes(&space, 1700000000000000000, 1700000001000000000);
  xplane::XPlaneBuilder plane(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  xplane::XLine* lines[] = {plane.AddLine(1, "one", 0), plane.AddLine(2, "two", 0)};
  const int64_t metadata = plane.EventMetadataId("step \"quoted\"");
  for (int i = 0; i < events; ++i) {
    auto* event = plane.AddEvent(lines[i % 2], metadata, int64_t{1000000} * i, 500000);  // ps
    plane.AddStat(event, "i", int64_t{i});
    plane.AddStat(event, "nan", std::numeric_limits<double>::quiet_NaN());
  }
  return space;
}

TEST_CASE("a trace many times the writer's buffer round-trips through gzip with every event") {
  constexpr int kEvents = 60000;  // ~8 MB of JSON: 30 buffers, 8 gzip blocks.
  const tensorflow::profiler::XSpace space = LargeSpace(kEvents);
  TempDir dir;
  const std::string gz = dir.path() + "/big.trace.json.gz";
  const std::string plain = dir.path() + "/big.trace.json";
  REQUIRE(exporter::WriteChromeTraceFile(space, gz).ok());
  REQUIRE(exporter::WriteChromeTraceFile(space, plain).ok());
  auto packed = exporter::ReadFile(gz);
  REQUIRE(packed.ok());
  auto json = exporter::GzipDecompress(*packed);
  REQUIRE(json.ok());
  REQUIRE(json->size() > 20 * exporter::ByteSink::kDefaultPieceBytes);
  CHECK(exporter::ReadFile(plain).value() == *json);  // .json: the same text, not deflated.
  const google::protobuf::Struct root = testing::ParseStrictJson(*json);
  const auto events = ChromeEvents(root, "X", "step \"quoted\"");
  REQUIRE(events.size() == kEvents);
  std::vector<bool> seen(kEvents, false);
  for (const auto* event : events) {
    const auto& args = event->fields().at("args").struct_value().fields();
    const int i = static_cast<int>(args.at("i").number_value());
    REQUIRE((i >= 0 && i < kEvents));
    CHECK_FALSE(seen[i]);
    seen[i] = true;
    CHECK(event->fields().at("ts").number_value() == Approx(i));  // i us
    CHECK(args.at("nan").kind_case() == google::protobuf::Value::kNullValue);
  }
  CHECK(ListDir(dir.path()) == std::vector<std::string>{"big.trace.json", "big.trace.json.gz"});
}

TEST_CASE("a trace write that fails leaves no file, and the error names the path") {
  const tensorflow::profiler::XSpace space = LargeSpace(20000);
  TempDir dir;
  SECTION("the folder does not exist") {
    const std::string path = dir.path() + "/missing/h.trace.json.gz";
    const absl::Status written = exporter::WriteChromeTraceFile(space, path);
    CHECK(absl::IsNotFound(written));
    CHECK(std::string(written.message()).find(dir.path() + "/missing") != std::string::npos);
  }
  SECTION("the disk fills up in the middle") {
    for (const char* name : {"h.trace.json.gz", "h.pt.trace.json", "h.trace.json"}) {
      INFO(name);
      const std::string path = dir.path() + "/" + name;
      absl::Status written;
      {
        testing::ScopedFileSizeLimit limit(64 << 10);  // Well below the trace.
        written = std::string(name).find(".pt.") != std::string::npos
                      ? exporter::WriteKinetoTraceFile(space, path)
                      : exporter::WriteChromeTraceFile(space, path);
      }
      CHECK(absl::IsResourceExhausted(written));
      CHECK(std::string(written.message()).find(path) != std::string::npos);
    }
  }
  CHECK(ListDir(dir.path()).empty());  // No partial file, no temporary file.
}

TEST_CASE("Chrome trace: memory events are counters on a track per allocator") {
  const std::string json = testing::ChromeTraceText(testing::MemorySpace());
  const google::protobuf::Struct root = testing::ParseStrictJson(json);
  for (const char* name : {xplane::kMemoryAllocationEvent, xplane::kMemoryDeallocationEvent,
                           xplane::kMemoryUsageEvent}) {
    CHECK(ChromeEvents(root, "X", name).empty());  // Not zero-length slices.
  }
  const auto value = [](const google::protobuf::Struct* event, const char* key) {
    return event->fields().at("args").struct_value().fields().at(key).number_value();
  };
  const auto has_arg = [](const google::protobuf::Struct* event, const char* key) {
    return event->fields().at("args").struct_value().fields().count(key) > 0;
  };
  const auto cpu = ChromeEvents(root, "C", "Memory cpu");
  REQUIRE(cpu.size() == 2);  // The allocation and the free: the curve's two steps.
  CHECK(cpu[0]->fields().at("ts").number_value() == Approx(11.0));
  CHECK(value(cpu[0], "allocated") == 4096);
  CHECK(value(cpu[1], "allocated") == 0);
  CHECK_FALSE(has_arg(cpu[0], "reserved"));  // The CPU allocator reports no pool.
  const auto cuda = ChromeEvents(root, "C", "Memory cuda:0");
  REQUIRE(cuda.size() == 1);
  CHECK(value(cuda[0], "allocated") == 1024);
  CHECK(value(cuda[0], "reserved") == 2'097'152);
  const auto hbm = ChromeEvents(root, "C", "Memory NPU:0/HBM");
  REQUIRE(hbm.size() == 1);
  CHECK(value(hbm[0], "allocated") == 65536);
  CHECK(value(hbm[0], "reserved") == 1'048'576);
  // All on the host plane's process: one curve per allocator in Perfetto.
  CHECK(cpu[0]->fields().at("pid").number_value() == cuda[0]->fields().at("pid").number_value());
  // The operator around them is still a slice.
  CHECK(ChromeEvents(root, "X", "aten::empty").size() == 1);
}

}  // namespace
}  // namespace neuronprof
