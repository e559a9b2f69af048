// The capture server's memory under clients that do not read their
// responses (bench/slow_clients_rss.sh drives it; loopback only).
//   server <port_file> <seconds>: a process whose FlightRecorder (256 MiB
//     ring) holds 4M markers, serving on a free port (written to
//     <port_file>), printing its RSS every 250 ms for <seconds>;
//   unread <port> <n> <hold_s>: n clients (a connection each) that ask for
//     the ring at once, take the response headers, never read the response
//     and vanish after <hold_s>;
//   pull <port> <n>: n sequential pulls that read their responses.
#include <grpcpp/grpcpp.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "neuronprof/neuronprof.h"
#include "neuronprof/server.h"
#include "proto/profiler_service.grpc.pb.h"

long RssMb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6)) / 1024;
  }
  return -1;
}

tensorflow::ProfileRequest Request() {
  tensorflow::ProfileRequest request;
  request.set_duration_ms(3600 * 1000);
  request.set_emit_xspace(true);
  request.set_host_name("probe");
  (*request.mutable_opts()->mutable_advanced_configuration())["neuronprof_flight_recorder"]
      .set_bool_value(true);
  return request;
}

int main(int argc, char** argv) {
  const std::string mode = argv[1];
  if (mode == "server") {
    neuronprof::ProfilerServerOptions so;
    so.port = 0;
    so.allowed_root = "/tmp/neuronprof_slow_clients";
    auto server = neuronprof::ProfilerServer::Start(so);
    if (!server.ok()) return 1;
    neuronprof::FlightRecorderOptions fo;
    fo.logdir = "/tmp/neuronprof_slow_clients";
    fo.host_name = "probe";
    fo.ring_bytes = int64_t{256} << 20;
    neuronprof::FlightRecorder recorder(fo);
    if (!recorder.status().ok()) return 2;
    for (int i = 0; i < 4000000; ++i) NEURONPROF_SCOPE("filler");
    std::ofstream(argv[2]) << (*server)->port();
    for (int i = 0; i < 4 * std::atoi(argv[3]); ++i) {
      std::printf("%ld\n", RssMb());
      std::fflush(stdout);
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    return 0;
  }
  const std::string address = std::string("127.0.0.1:") + argv[2];
  const int n = std::atoi(argv[3]);
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(INT_MAX);
  if (mode == "pull") {
    auto stub = tensorflow::ProfilerService::NewStub(
        grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
    for (int i = 0; i < n; ++i) {
      tensorflow::ProfileResponse response;
      grpc::ClientContext context;
      auto status = stub->Profile(&context, Request(), &response);
      std::printf("pull %d: %s %zu bytes\n", i, status.ok() ? "ok" : status.error_message().c_str(),
                  response.ByteSizeLong());
    }
    return 0;
  }
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  struct Unread {
    std::unique_ptr<tensorflow::ProfilerService::Stub> stub;
    grpc::ClientContext context;
    std::unique_ptr<grpc::ClientAsyncResponseReader<tensorflow::ProfileResponse>> reader;
  };
  grpc::CompletionQueue queue;
  std::vector<std::unique_ptr<Unread>> unread;
  for (int i = 0; i < n; ++i) {
    args.SetInt("probe.client", i);  // A connection each.
    unread.push_back(std::make_unique<Unread>());
    unread.back()->stub = tensorflow::ProfilerService::NewStub(
        grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
    unread.back()->reader =
        unread.back()->stub->PrepareAsyncProfile(&unread.back()->context, Request(), &queue);
    unread.back()->reader->StartCall();
    unread.back()->reader->ReadInitialMetadata(unread.back().get());
  }
  int held = 0;
  for (int i = 0; i < n; ++i) {
    void* tag;
    bool ok;
    queue.Next(&tag, &ok);
    held += static_cast<Unread*>(tag)->context.GetServerInitialMetadata().count(
        "neuronprof-response-bytes");
  }
  std::printf("unread: %d of %d got a response and do not read it\n", held, n);
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::seconds(std::atoi(argv[4])));
  std::_Exit(0);  // Gone without a word, as a client that dies.
}
