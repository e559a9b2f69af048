// The collector contract of collectors/collector.h as the session keeps it,
// with fake collectors registered through the real factory registry.
#include "src/session/capture_session.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "neuronprof/trace.h"
#include "src/collectors/collector.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
#include "tests/xplane_read.h"

namespace neuronprof {
namespace {

using tensorflow::profiler::XPlane;
using tensorflow::profiler::XSpace;

// What a fake is told to do; every call it receives is appended to `calls`
// as "<name>.<method>", shared by the fakes of one test to show the order.
struct FakeScript {
  std::string name;
  std::vector<std::string>* calls;
  absl::Status start_status, stop_status, collect_status;
  bool records_operators = false;
  std::string warning;  // Reported through CollectStats when not empty.
};

// Collect adds the plane "/fake:<name>" and nothing else.
class FakeCollector : public collectors::Collector {
 public:
  explicit FakeCollector(const FakeScript* script) : script_(script) {}
  ~FakeCollector() override { Log("destroy"); }
  std::string name() const override { return script_->name; }
  bool records_operators() const override { return script_->records_operators; }
  absl::Status Start() override {
    Log("start");
    return script_->start_status;
  }
  absl::Status Stop() override {
    Log("stop");
    return script_->stop_status;
  }
  absl::Status Collect(XSpace* space, collectors::CollectStats* stats) override {
    Log("collect");
    if (!script_->collect_status.ok()) return script_->collect_status;
    xplane::FindOrAddPlane(space, "/fake:" + script_->name);
    if (!script_->warning.empty()) stats->warnings.push_back(script_->warning);
    return absl::OkStatus();
  }

 private:
  void Log(const char* method) { script_->calls->push_back(script_->name + "." + method); }
  const FakeScript* script_;
};

// Registers a fake for the test's scope only.
collectors::ScopedCollectorFactory RegisterFake(const FakeScript* script) {
  return collectors::ScopedCollectorFactory(
      [script](const collectors::CollectorOptions&) -> std::unique_ptr<collectors::Collector> {
        return std::make_unique<FakeCollector>(script);
      });
}

using testing::HasEvent;
using testing::HasStat;

TEST_CASE("each collector is started, stopped, collected once, in that order") {
  std::vector<std::string> calls;
  FakeScript a{"a", &calls}, b{"b", &calls};
  auto registered_a = RegisterFake(&a);
  auto registered_b = RegisterFake(&b);
  auto session = session::CaptureSession::Start({});
  REQUIRE(session.ok());
  CHECK(calls == std::vector<std::string>{"a.start", "b.start"});
  auto result = (*session)->Stop();
  REQUIRE(result.ok());
  CHECK(calls == std::vector<std::string>{"a.start", "b.start", "a.stop", "b.stop", "a.collect",
                                          "b.collect"});
  session->reset();
  CHECK(calls.size() == 8);  // Destroyed with the session, nothing called after.
  CHECK(xplane::FindPlane(result->space, "/fake:a") != nullptr);
  CHECK(xplane::FindPlane(result->space, "/fake:b") != nullptr);
  CHECK(result->space.errors_size() == 0);
}

TEST_CASE("a failed start stops the started collectors in reverse and names the failing one") {
  std::vector<std::string> calls;
  FakeScript first{"first", &calls}, second{"second", &calls}, refusing{"refusing", &calls};
  refusing.start_status = absl::UnavailableError("fake device is busy");
  {
    auto registered_first = RegisterFake(&first);
    auto registered_second = RegisterFake(&second);
    auto registered_refusing = RegisterFake(&refusing);
    auto session = session::CaptureSession::Start({});
    REQUIRE_FALSE(session.ok());
    CHECK(absl::IsUnavailable(session.status()));
    const std::string message(session.status().message());
    CHECK(message.find("refusing collector") != std::string::npos);
    CHECK(message.find("fake device is busy") != std::string::npos);
    // Rolled back last-started first; the refusing one is never stopped and
    // no collector is collected.
    CHECK(calls == std::vector<std::string>{"first.start", "second.start", "refusing.start",
                                            "second.stop", "first.stop", "first.destroy",
                                            "second.destroy", "refusing.destroy"});
  }
  // No window is left open: the next capture (without the factories, which
  // unregistered with their handles) starts and collects.
  calls.clear();
  auto next = session::CaptureSession::Start({});
  REQUIRE(next.ok());
  { ScopedTrace marker("next_capture"); }
  auto result = (*next)->Stop();
  REQUIRE(result.ok());
  CHECK(calls.empty());
  const XPlane* host = xplane::FindPlane(result->space, xplane::kHostPlaneName);
  REQUIRE(host != nullptr);
  CHECK(HasEvent(*host, "next_capture"));
}

TEST_CASE("a failing Collect keeps the other planes and records the error in the XSpace") {
  std::vector<std::string> calls;
  FakeScript broken{"broken", &calls}, healthy{"healthy", &calls};
  broken.collect_status = absl::InternalError("fake cannot translate");
  auto registered_broken = RegisterFake(&broken);
  auto registered_healthy = RegisterFake(&healthy);
  auto session = session::CaptureSession::Start({});
  REQUIRE(session.ok());
  { ScopedTrace kept("kept_marker"); }
  auto result = (*session)->Stop();
  REQUIRE(result.ok());
  REQUIRE(result->space.errors_size() == 1);
  CHECK(result->space.errors(0).find("broken collector failed") != std::string::npos);
  CHECK(result->space.errors(0).find("fake cannot translate") != std::string::npos);
  CHECK(xplane::FindPlane(result->space, "/fake:healthy") != nullptr);
  CHECK(xplane::FindPlane(result->space, "/fake:broken") == nullptr);
  const XPlane* host = xplane::FindPlane(result->space, xplane::kHostPlaneName);
  REQUIRE(host != nullptr);
  CHECK(HasEvent(*host, "kept_marker"));
}

TEST_CASE("warnings a collector reports in CollectStats become XSpace warnings") {
  std::vector<std::string> calls;
  FakeScript warns{"warns", &calls};
  warns.warning = "neuronprof: fake lost 3 records";
  auto registered = RegisterFake(&warns);
  auto session = session::CaptureSession::Start({});
  REQUIRE(session.ok());
  auto result = (*session)->Stop();
  REQUIRE(result.ok());
  REQUIRE(result->space.warnings_size() == 1);
  CHECK(result->space.warnings(0) == "neuronprof: fake lost 3 records");
  CHECK(result->stats.warnings.empty());  // Moved, not reported twice.
}

TEST_CASE("only host markers alone, with nothing to discard, are stopped for streaming") {
  {
    auto session = session::CaptureSession::Start({});
    REQUIRE(session.ok());
    CHECK((*session)->CanStreamHostPlane());
    (*session)->DiscardEarlierEvents();  // A schedule's warmup ended.
    CHECK_FALSE((*session)->CanStreamHostPlane());
    CHECK(absl::IsFailedPrecondition((*session)->StopForStreaming().status()));
    CHECK((*session)->Stop().ok());  // The XSpace path stops it.
  }
  std::vector<std::string> calls;
  FakeScript other{"other", &calls};
  auto registered = RegisterFake(&other);
  auto session = session::CaptureSession::Start({});
  REQUIRE(session.ok());
  CHECK_FALSE((*session)->CanStreamHostPlane());  // Its plane is collected with the host's.
  auto result = (*session)->Stop();
  REQUIRE(result.ok());
  CHECK(xplane::FindPlane(result->space, "/fake:other") != nullptr);
}

TEST_CASE("the session annotates operator events when a collector records operators") {
  std::vector<std::string> calls;
  FakeScript ops{"ops", &calls};
  auto run_capture = [&] {
    auto session = session::CaptureSession::Start({});
    REQUIRE(session.ok());
    { ScopedTrace op("aten::relu", {TraceArg(xplane::kOpFrameworkStat, "torch")}); }
    auto result = (*session)->Stop();
    REQUIRE(result.ok());
    const XPlane* host = xplane::FindPlane(result->space, xplane::kHostPlaneName);
    REQUIRE(host != nullptr);
    REQUIRE(HasEvent(*host, "aten::relu"));
    return HasStat(*host, xplane::kTfOpStat);
  };
  SECTION("no operator collector: the host plane is left as recorded") {
    CHECK_FALSE(run_capture());
  }
  SECTION("an operator collector: tf_op is added to the operator events") {
    ops.records_operators = true;
    auto registered = RegisterFake(&ops);
    CHECK(run_capture());
  }
}

}  // namespace
}  // namespace neuronprof
