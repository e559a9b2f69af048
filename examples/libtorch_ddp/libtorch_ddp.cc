// The seeds' MLP (examples/libtorch_mlp) trained data-parallel: every rank
// is a process with its own replica and data, gradients are all-reduced
// over Gloo after each backward pass, as torch DDP does. Each rank serves
// remote captures (neuronprof::ProfilerServer on --port + LOCAL_RANK) with
// libtorch operators and c10d collectives, so one
//
//   neuronprof capture --service_addr 127.0.0.1:9012-9015 --logdir logs ...
//
// takes a window of every rank at once. --slow_rank R --slow_ms M makes
// rank R sleep M ms before each all-reduce: the others wait for it inside
// the collective, which the multi-rank summary reports as a straggler.
//
// Two ways to start it:
//  - launcher (no RANK in the environment): forks --world_size rank
//    processes of this program with RANK, LOCAL_RANK, WORLD_SIZE,
//    MASTER_ADDR, MASTER_PORT set, like torchrun, and reports a rank that
//    dies (the others are then stopped);
//  - one rank (RANK set, e.g. by torchrun or a job scheduler): reads those
//    variables and trains as that rank.
//
// Exit: 0 done, 1 a rank failed / setup error, 2 bad arguments, 3 a
// collective failed (a peer rank died).
// See examples/libtorch_ddp/README.md for the commands.
#include <pthread.h>
#include <signal.h>
#include <torch/torch.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/Ops.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <vector>

#include "launcher.h"
#include "libtorch_mlp/mlp_model.h"
#include "neuronprof/neuronprof.h"
#include "neuronprof/server.h"
#include "neuronprof/torch.h"

namespace {

std::atomic<bool> g_stop{false};
extern "C" void OnStopSignal(int /*signal*/) { g_stop.store(true); }

struct Config {
  int world_size = 4;
  int steps = 100;
  double seconds = 0;  // > 0: train this long instead of --steps.
  int slow_rank = -1;
  int slow_ms = 0;
  int port = 9012;
  std::string logdir = "./logs";
  std::string store = "tcp";
  std::string store_file;  // --store file: the FileStore's path.
  int master_port = 0;
  int hidden = 256;
  int batch = 64;
  int timeout_s = 60;
  std::string on_comm_error = "exit";
  bool wait_for_capture = false;
};

using neuronprof_examples::MLP;  // The layers of examples/libtorch_mlp.

bool ParseInt(const char* text, int min, int max, int* out) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < min || v > max) return false;
  *out = static_cast<int>(v);
  return true;
}

// Flags as "--flag value"; `rank_args` keeps what every rank is given.
bool ParseArgs(int argc, char** argv, Config* c, std::vector<std::string>* rank_args) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") return false;
    if (i + 1 >= argc && flag != "--wait_for_capture") {
      std::fprintf(stderr, "libtorch_ddp: missing value for %s\n", flag.c_str());
      return false;
    }
    if (flag == "--wait_for_capture") {
      c->wait_for_capture = true;
      rank_args->push_back(flag);
      continue;
    }
    const char* value = argv[++i];
    bool ok = true;
    bool for_ranks = true;
    if (flag == "--world_size") {
      ok = ParseInt(value, 1, 1024, &c->world_size);
      for_ranks = false;  // Ranks take WORLD_SIZE from the environment.
    } else if (flag == "--master_port") {
      ok = ParseInt(value, 0, 65535, &c->master_port);
      for_ranks = false;
    } else if (flag == "--steps") {
      ok = ParseInt(value, 1, 100000000, &c->steps);
    } else if (flag == "--seconds") {
      char* end = nullptr;
      c->seconds = std::strtod(value, &end);
      ok = end != value && *end == '\0' && c->seconds >= 0;
    } else if (flag == "--slow_rank") {
      ok = ParseInt(value, -1, 1023, &c->slow_rank);
    } else if (flag == "--slow_ms") {
      ok = ParseInt(value, 0, 600000, &c->slow_ms);
    } else if (flag == "--port") {
      ok = ParseInt(value, 1, 65535, &c->port);
    } else if (flag == "--logdir") {
      c->logdir = value;
      ok = !c->logdir.empty();
    } else if (flag == "--store") {
      c->store = value;
      ok = c->store == "tcp" || c->store == "file";
    } else if (flag == "--store_file") {
      c->store_file = value;
      ok = !c->store_file.empty();
    } else if (flag == "--hidden") {
      ok = ParseInt(value, 1, 1 << 16, &c->hidden);
    } else if (flag == "--batch") {
      ok = ParseInt(value, 1, 1 << 16, &c->batch);
    } else if (flag == "--timeout_s") {
      ok = ParseInt(value, 1, 86400, &c->timeout_s);
    } else if (flag == "--on_comm_error") {
      c->on_comm_error = value;
      ok = c->on_comm_error == "exit" || c->on_comm_error == "serve";
    } else {
      std::fprintf(stderr, "libtorch_ddp: unknown flag %s\n", flag.c_str());
      return false;
    }
    if (!ok) {
      std::fprintf(stderr, "libtorch_ddp: bad value '%s' for %s\n", value, flag.c_str());
      return false;
    }
    if (for_ranks) {
      rank_args->push_back(flag);
      rank_args->push_back(value);
    }
  }
  return true;
}

void PrintUsage() {
  std::fprintf(stderr,
               "usage: libtorch_ddp [--world_size N (4)] [--steps N (100) | --seconds S]\n"
               "         [--slow_rank R --slow_ms M] [--port P (9012; rank r serves on P + "
               "LOCAL_RANK)]\n"
               "         [--logdir DIR (./logs)] [--store tcp|file] [--store_file PATH]\n"
               "         [--master_port P (0: a free one)] [--hidden H (256)] [--batch B (64)]\n"
               "         [--timeout_s S (60)] [--on_comm_error exit|serve] [--wait_for_capture]\n"
               "Without RANK in the environment it launches --world_size ranks; with RANK,\n"
               "LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT set it runs as that rank.\n");
}

// An environment variable as an int in [min, max], or an error naming it.
bool EnvInt(const char* name, int min, int max, int* out) {
  const char* text = std::getenv(name);
  if (text == nullptr) {
    std::fprintf(stderr, "libtorch_ddp: %s is not set\n", name);
    return false;
  }
  if (!ParseInt(text, min, max, out)) {
    std::fprintf(stderr, "libtorch_ddp: %s='%s' is not a number in [%d, %d]\n", name, text, min,
                 max);
    return false;
  }
  return true;
}

struct RankEnv {
  int rank = 0;
  int local_rank = 0;
  int world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
};

bool ReadRankEnv(RankEnv* env) {
  if (!EnvInt("WORLD_SIZE", 1, 1024, &env->world_size) ||
      !EnvInt("RANK", 0, env->world_size - 1, &env->rank)) {
    return false;
  }
  env->local_rank = env->rank;
  if (std::getenv("LOCAL_RANK") != nullptr &&
      !EnvInt("LOCAL_RANK", 0, env->world_size - 1, &env->local_rank)) {
    return false;
  }
  if (const char* addr = std::getenv("MASTER_ADDR")) env->master_addr = addr;
  if (std::getenv("MASTER_PORT") != nullptr &&
      !EnvInt("MASTER_PORT", 1, 65535, &env->master_port)) {
    return false;
  }
  return true;
}

c10::intrusive_ptr<::c10d::Store> MakeStore(const Config& config, const RankEnv& env) {
  if (config.store == "file") {
    return c10::make_intrusive<::c10d::FileStore>(config.store_file, env.world_size);
  }
  ::c10d::TCPStoreOptions options;
  options.port = static_cast<uint16_t>(env.master_port);
  options.isServer = env.rank == 0;
  options.numWorkers = env.world_size;
  options.timeout = std::chrono::seconds(config.timeout_s);
  return c10::make_intrusive<::c10d::TCPStore>(env.master_addr, options);
}

// Every parameter's tensor (or gradient) flattened into one bucket, with
// room for `extra` more values at the end.
torch::Tensor Flatten(const std::vector<torch::Tensor>& tensors, int extra) {
  std::vector<torch::Tensor> flat;
  for (const torch::Tensor& t : tensors) flat.push_back(t.reshape({-1}));
  if (extra > 0) flat.push_back(torch::zeros({extra}));
  return torch::cat(flat);
}

void Unflatten(const torch::Tensor& bucket, std::vector<torch::Tensor>& tensors) {
  int64_t offset = 0;
  for (torch::Tensor& t : tensors) {
    const int64_t n = t.numel();
    t.copy_(bucket.slice(0, offset, offset + n).view_as(t));
    offset += n;
  }
}

class Trainer {
 public:
  Trainer(const Config& config, const RankEnv& env, c10::intrusive_ptr<::c10d::ProcessGroup> pg)
      : config_(config),
        env_(env),
        pg_(std::move(pg)),
        model_(10, config.hidden, 2),
        optimizer_(model_->parameters(), torch::optim::SGDOptions(0.01)) {
    neuronprof::NameModules(*model_);
    model_->train();
  }

  // Rank 0's initial weights to every rank, as DDP does at construction.
  void BroadcastParameters() {
    NEURONPROF_SCOPE("broadcast_parameters");
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> params = model_->parameters();
    std::vector<torch::Tensor> bucket{Flatten(params, 0)};
    ::c10d::ops::broadcast(pg_, bucket)->wait();
    Unflatten(bucket[0], params);
  }

  // One step; returns false once every rank agreed to stop (the stop flag
  // travels in the gradient bucket, so all ranks end at the same step).
  bool Step(int64_t step, bool want_stop) {
    neuronprof::StepTrace trace("train_step", step);
    optimizer_.zero_grad();
    torch::Tensor x = torch::randn({config_.batch, 10});
    torch::Tensor label = torch::randint(0, 2, {config_.batch}, torch::kLong);
    torch::Tensor loss;
    {
      NEURONPROF_SCOPE("model_build");
      loss = loss_fn_(model_->forward(x), label);
    }
    {
      NEURONPROF_SCOPE("loss_backward");
      loss.backward();
    }
    if (env_.rank == config_.slow_rank && config_.slow_ms > 0) {
      NEURONPROF_SCOPE("slow_rank_delay");  // The straggler, on purpose.
      std::this_thread::sleep_for(std::chrono::milliseconds(config_.slow_ms));
    }
    bool stop = false;
    {
      NEURONPROF_SCOPE("allreduce_gradients");
      torch::NoGradGuard no_grad;
      std::vector<torch::Tensor> grads;
      for (const torch::Tensor& p : model_->parameters()) grads.push_back(p.grad());
      std::vector<torch::Tensor> bucket{Flatten(grads, 1)};
      const int64_t flag = bucket[0].numel() - 1;
      bucket[0][flag] = want_stop ? 1.0f : 0.0f;
      ::c10d::ops::allreduce(pg_, bucket)->wait();
      stop = bucket[0][flag].item<float>() > 0;
      bucket[0].div_(env_.world_size);
      Unflatten(bucket[0], grads);
    }
    {
      NEURONPROF_SCOPE("optimizer_step");
      optimizer_.step();
    }
    last_loss_ = loss.item<float>();
    return !stop;
  }

  float last_loss() const { return last_loss_; }

 private:
  const Config& config_;
  const RankEnv& env_;
  c10::intrusive_ptr<::c10d::ProcessGroup> pg_;
  MLP model_;
  torch::optim::SGD optimizer_;
  torch::nn::NLLLoss loss_fn_;
  float last_loss_ = 0;
};

// After a failed collective with --on_comm_error serve: the rank stays up
// and capturable (like a job hung on a dead peer) until SIGINT/SIGTERM,
// its waiting marked in 100 ms pieces so that a capture shows where it is
// (a window with no events at all counts as a failed capture).
void ServeUntilStopped() {
  while (!g_stop.load()) {
    NEURONPROF_SCOPE("waiting_after_comm_error");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

void InstallStopHandlers() {
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

// Names the calling thread "rank<R>-<role>" for the OS (top, gdb) and for
// neuronprof's thread lines. A rank is re-executed through /proc/self/exe,
// so without this every thread is named "exe"; threads a library starts
// (gRPC's, Gloo's) take the name their creator has at that moment, so the
// caller names itself for the role of the threads it is about to start.
void NameThread(const RankEnv& env, const char* role) {
  const std::string name = "rank" + std::to_string(env.rank) + "-" + role;
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());  // The OS limit.
  neuronprof::SetCurrentThreadName(name);
}

// The rank's capture server. The rank identity (RANK, LOCAL_RANK,
// WORLD_SIZE) comes from the environment; the port is the base plus the
// local rank, as a Profiler's.
std::unique_ptr<neuronprof::ProfilerServer> StartServer(const Config& config, const RankEnv& env) {
  if (absl::Status s = neuronprof::EnableTorchOperators(); !s.ok()) {
    std::fprintf(stderr, "libtorch_ddp: rank %d: %s\n", env.rank, s.ToString().c_str());
    return nullptr;
  }
  neuronprof::ProfilerServerOptions options;
  NameThread(env, "grpc");  // The server's threads.
  options.port = config.port + env.local_rank;
  options.allowed_root = config.logdir;
  options.backend = "gloo";
  auto server = neuronprof::ProfilerServer::Start(options);
  NameThread(env, "main");
  if (!server.ok()) {
    std::fprintf(stderr, "libtorch_ddp: rank %d: cannot start the profiler server: %s\n", env.rank,
                 server.status().ToString().c_str());
    return nullptr;
  }
  std::printf("rank %d: neuronprof server listening on 127.0.0.1:%d (pid %d)\n", env.rank,
              (*server)->port(), static_cast<int>(getpid()));
  std::fflush(stdout);
  return std::move(*server);
}

// Joins the process group and trains; throws what c10d throws.
void Train(const Config& config, const RankEnv& env) {
  auto gloo_options =
      ::c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(config.timeout_s));
  gloo_options->devices.push_back(::c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  NameThread(env, "gloo");  // The store's and Gloo's worker threads.
  auto pg = c10::make_intrusive<::c10d::ProcessGroupGloo>(MakeStore(config, env), env.rank,
                                                          env.world_size, gloo_options);
  NameThread(env, "main");
  Trainer trainer(config, env, pg);
  trainer.BroadcastParameters();
  std::printf("rank %d: training\n", env.rank);
  std::fflush(stdout);
  const auto start = std::chrono::steady_clock::now();
  int64_t step = 0;
  for (;; ++step) {
    const bool time_up = config.seconds > 0 ? std::chrono::steady_clock::now() - start >=
                                                  std::chrono::duration<double>(config.seconds)
                                            : step + 1 >= config.steps;
    if (!trainer.Step(step, time_up || g_stop.load())) break;
    if (step % 100 == 0 && env.rank == 0) {
      std::printf("rank 0: step %lld loss %.4f\n", static_cast<long long>(step),
                  trainer.last_loss());
      std::fflush(stdout);
    }
  }
  std::printf("rank %d: done after %lld steps, loss %.4f\n", env.rank,
              static_cast<long long>(step + 1), trainer.last_loss());
}

int RunRank(const Config& config) {
  RankEnv env;
  if (!ReadRankEnv(&env)) return 1;
  if (config.store == "file" && config.store_file.empty()) {
    std::fprintf(stderr, "libtorch_ddp: --store file needs --store_file PATH\n");
    return 2;
  }
  InstallStopHandlers();
  NameThread(env, "main");
  torch::set_num_threads(1);     // N ranks share a few cores.
  torch::manual_seed(env.rank);  // Each rank its own data (and init, then broadcast).
  std::unique_ptr<neuronprof::ProfilerServer> server = StartServer(config, env);
  if (server == nullptr) return 1;
  if (config.wait_for_capture) {
    // The whole run inside a capture window on every rank (each rank
    // waits for its own, before any collective): the same collectives in
    // every rank's file. Exiting ends the window early (Shutdown).
    while (!neuronprof::TracingEnabled() && !g_stop.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  int status = 0;
  try {
    Train(config, env);
  } catch (const std::exception& e) {
    // Only the first line: c10::Error appends a long backtrace.
    std::string what = e.what();
    what = what.substr(0, what.find('\n'));
    std::fprintf(stderr, "libtorch_ddp: rank %d: collective failed (did a peer rank die?): %s\n",
                 env.rank, what.c_str());
    status = 3;
    if (config.on_comm_error == "serve") ServeUntilStopped();
  }
  std::fflush(stdout);
  server->Shutdown();
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  std::vector<std::string> rank_args;
  if (!ParseArgs(argc, argv, &config, &rank_args)) {
    PrintUsage();
    return 2;
  }
  if (std::getenv("RANK") != nullptr) return RunRank(config);

  // Launcher: a FileStore needs one path shared by the ranks.
  std::string made_store_file;
  if (config.store == "file" && config.store_file.empty()) {
    char path[] = "/tmp/libtorch_ddp_store_XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) {
      std::fprintf(stderr, "libtorch_ddp: cannot make a FileStore file in /tmp\n");
      return 1;
    }
    close(fd);
    made_store_file = path;
    rank_args.push_back("--store_file");
    rank_args.push_back(made_store_file);
  }
  ddp_example::LaunchOptions launch;
  launch.world_size = config.world_size;
  launch.master_port = config.master_port;
  launch.rank_args = rank_args;
  const int status = ddp_example::LaunchRanks(launch);
  if (!made_store_file.empty()) std::remove(made_store_file.c_str());
  return status;
}
