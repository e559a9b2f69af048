// Helpers shared by the gRPC server and capture client tests.
#ifndef NEURONPROF_TESTS_RPC_RPC_TEST_UTIL_H_
#define NEURONPROF_TESTS_RPC_RPC_TEST_UTIL_H_

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "neuronprof/server.h"
#include "proto/xplane.pb.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
#include "tests/xplane_read.h"

namespace neuronprof {
namespace testing {

constexpr auto kBound = std::chrono::seconds(20);  // Upper bound of any wait.

inline bool Exists(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}

inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Polls `done` every millisecond until it holds or kBound passes.
inline bool WaitFor(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + kBound;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// A ProfilerServer of this process on a free loopback port.
inline std::unique_ptr<ProfilerServer> StartTestServer(const std::string& allowed_root,
                                                       ProfilerServerOptions options = {}) {
  options.port = 0;
  options.allowed_root = allowed_root;
  auto started = ProfilerServer::Start(options);
  REQUIRE(started.ok());
  REQUIRE((*started)->port() > 0);
  return std::move(*started);
}

// A socket listening on 127.0.0.1:port (0: a free port), as another
// program holding that port would; close() it to release the port.
inline int ListenOnLoopbackPort(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  REQUIRE(listen(fd, 1) == 0);
  return fd;
}

// A socket listening on a free 127.0.0.1 port; the port goes to *port.
inline int ListenOnFreeLoopbackPort(int* port) {
  const int fd = ListenOnLoopbackPort(0);
  sockaddr_in address{};
  socklen_t length = sizeof(address);
  REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  *port = ntohs(address.sin_port);
  return fd;
}

// Whether 127.0.0.1:port can be bound now (it is released again).
inline bool LoopbackPortFree(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  const bool bound = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  close(fd);
  return bound;
}

// The first of `count` consecutive loopback ports that are all free now:
// a free port picked by the kernel, checked with the ones above it.
inline int FreeLoopbackPortRange(int count) {
  for (int tries = 0; tries < 100; ++tries) {
    int base = 0;
    close(ListenOnFreeLoopbackPort(&base));
    if (base + count - 1 > 65535) continue;
    bool all_free = true;
    for (int port = base; port < base + count && all_free; ++port) {
      all_free = LoopbackPortFree(port);
    }
    if (all_free) return base;
  }
  FAIL("no range of " << count << " free loopback ports");
  return 0;
}

// A loopback port nobody listens on: bound, then closed.
inline int RefusedPort() {
  int port = 0;
  close(ListenOnFreeLoopbackPort(&port));
  return port;
}

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_TESTS_RPC_RPC_TEST_UTIL_H_
