// The event pool's commits: pages ahead of the claimed blocks are
// committed off the recording threads, by a thread that sleeps until
// claims need it (a polling thread took a core from a saturated server a
// thousand times a second); a ring is committed whole when it is made.
#include "src/core/event_pool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "tests/test_util.h"

namespace neuronprof {
namespace core {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kBlocksPerMiB = kMiB / internal::EventBlock::kBytes;
constexpr char kNoBackgroundCommits[] =
    "no background commits here (MADV_POPULATE_WRITE needs Linux 5.14): not run";

// /proc/self/task/<tid>/ of the pool's background thread, or "".
std::string PrefaulterTask() {
  for (const std::string& tid : testing::ListDir("/proc/self/task")) {
    const std::string dir = "/proc/self/task/" + tid + "/";
    std::string comm;
    std::getline(std::ifstream(dir + "comm"), comm);
    if (comm == EventPool::kPrefaultThreadName) return dir;
  }
  return "";
}

// The task's voluntary context switches: one per time it went to sleep.
long VoluntarySwitches(const std::string& task) {
  std::ifstream status(task + "status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("voluntary_ctxt_switches:", 0) == 0) return std::stol(line.substr(24));
  }
  return -1;
}

bool Resident(const EventPool& pool, uint64_t offset) {
  unsigned char resident = 0;
  char* page = pool.BlockOf(reinterpret_cast<const char*>(pool.ring_header(0)) + offset);
  return mincore(page, static_cast<size_t>(sysconf(_SC_PAGESIZE)), &resident) == 0 &&
         (resident & 1) != 0;
}

// Waits (up to a minute, for loaded sanitizer runs) until `offset` is committed.
bool BecomesResident(const EventPool& pool, uint64_t offset) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (!Resident(pool, offset)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

// Waits until the background thread is asleep (state S in its stat line).
bool Sleeps(const std::string& task) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  for (;;) {
    std::string stat;
    std::getline(std::ifstream(task + "stat"), stat);
    const size_t name_end = stat.rfind(')');
    if (name_end != std::string::npos && stat.compare(name_end, 3, ") S") == 0) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
}

TEST_CASE("the pool's background thread sleeps while no block is claimed") {
  auto pool = EventPool::Create(256 * kMiB, /*generation=*/1);
  REQUIRE(pool.ok());
  const std::string task = PrefaulterTask();
  if (task.empty()) {
    WARN(kNoBackgroundCommits);
    return;
  }
  REQUIRE(Sleeps(task));
  const long before = VoluntarySwitches(task);
  // The interval in which it must stay asleep; a 1 ms poll woke ~50 times.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(VoluntarySwitches(task) - before <= 1);
}

TEST_CASE("claimed blocks wake the background thread to commit ahead of them") {
  auto pool = EventPool::Create(256 * kMiB, /*generation=*/1);
  REQUIRE(pool.ok());
  if (PrefaulterTask().empty()) {
    WARN(kNoBackgroundCommits);
    return;
  }
  // Committed at creation: 32 MiB ahead of no claims.
  REQUIRE(BecomesResident(**pool, 31 * kMiB));
  CHECK_FALSE(Resident(**pool, 100 * kMiB));
  for (uint64_t i = 0; i < 64 * kBlocksPerMiB; ++i) REQUIRE((*pool)->ClaimBlock() != nullptr);
  // 64 MiB claimed: committed up to 32 MiB beyond them.
  CHECK(BecomesResident(**pool, 95 * kMiB));
  CHECK_FALSE(Resident(**pool, 200 * kMiB));
}

TEST_CASE("a ring is committed whole before it records, with no background thread") {
  auto ring = EventPool::Create(96 * kMiB, /*generation=*/1, /*ring=*/true);
  REQUIRE(ring.ok());
  CHECK(PrefaulterTask().empty());
  for (uint64_t offset = 0; offset < 96 * kMiB; offset += kMiB) {
    INFO("MiB " << offset / kMiB);
    REQUIRE(Resident(**ring, offset));
  }
}

}  // namespace
}  // namespace core
}  // namespace neuronprof
