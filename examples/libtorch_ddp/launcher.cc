#include "launcher.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace ddp_example {
namespace {

std::atomic<int> g_signal{0};
extern "C" void OnLauncherSignal(int signal) { g_signal.store(signal); }

// A loopback port free right now, for the rank-0 TCPStore.
int FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

// In the forked child: the rank's environment, then the program again.
[[noreturn]] void ExecRank(const LaunchOptions& options, int rank, int master_port) {
  const std::string r = std::to_string(rank);
  const std::string n = std::to_string(options.world_size);
  setenv("RANK", r.c_str(), 1);
  setenv("LOCAL_RANK", r.c_str(), 1);  // One host: local rank = rank.
  setenv("WORLD_SIZE", n.c_str(), 1);
  setenv("LOCAL_WORLD_SIZE", n.c_str(), 1);
  setenv("MASTER_ADDR", options.master_addr.c_str(), 1);
  setenv("MASTER_PORT", std::to_string(master_port).c_str(), 1);
  std::vector<std::string> args{"libtorch_ddp"};
  args.insert(args.end(), options.rank_args.begin(), options.rank_args.end());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  execv("/proc/self/exe", argv.data());
  std::fprintf(stderr, "libtorch_ddp: rank %d: cannot run /proc/self/exe: %s\n", rank,
               std::strerror(errno));
  _exit(127);
}

std::string Describe(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = sigabbrev_np(sig);
    return "was killed by signal " + std::to_string(sig) + " (SIG" + (name ? name : "?") + ")";
  }
  return "ended with wait status " + std::to_string(status);
}

void SignalAll(const std::vector<pid_t>& pids, int signal) {
  for (pid_t pid : pids) {
    if (pid > 0) kill(pid, signal);
  }
}

void InstallForwardingHandlers() {
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = OnLauncherSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

// Forks a process per rank; on a failed fork, stops the ones started.
bool StartRanks(const LaunchOptions& options, int master_port, std::vector<pid_t>* pids) {
  std::fflush(nullptr);  // Nothing buffered twice after fork.
  pids->assign(options.world_size, 0);
  for (int rank = 0; rank < options.world_size; ++rank) {
    const pid_t pid = fork();
    if (pid == 0) ExecRank(options, rank, master_port);
    if (pid < 0) {
      std::fprintf(stderr, "libtorch_ddp: cannot start rank %d: %s\n", rank, std::strerror(errno));
      SignalAll(*pids, SIGTERM);
      return false;
    }
    (*pids)[rank] = pid;
  }
  return true;
}

// Waits for every rank. The first that fails is reported and the others
// are stopped (SIGTERM, SIGKILL 10 s later). Returns true if all exited 0.
bool WatchRanks(std::vector<pid_t>& pids) {
  using Clock = std::chrono::steady_clock;
  bool failed = false;
  bool forwarded = false;
  Clock::time_point kill_at = Clock::time_point::max();
  int running = 0;
  for (pid_t pid : pids) running += pid > 0;
  while (running > 0) {
    if (g_signal.load() != 0 && !forwarded) {
      SignalAll(pids, SIGTERM);  // Each rank stops after its current step.
      forwarded = true;
    }
    if (Clock::now() >= kill_at) {
      SignalAll(pids, SIGKILL);
      kill_at = Clock::time_point::max();
    }
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) {
      // No rank has ended: look again shortly (a signal cuts the sleep short).
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    for (size_t rank = 0; rank < pids.size(); ++rank) {
      if (pids[rank] != pid) continue;
      pids[rank] = 0;
      --running;
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) break;
      std::fprintf(stderr, "libtorch_ddp: rank %zu (pid %d) %s%s\n", rank, static_cast<int>(pid),
                   Describe(status).c_str(), failed ? "" : "; stopping the other ranks");
      if (!failed) {
        SignalAll(pids, SIGTERM);
        kill_at = Clock::now() + std::chrono::seconds(10);
      }
      failed = true;
    }
  }
  return !failed;
}

}  // namespace

int LaunchRanks(const LaunchOptions& options) {
  int master_port = options.master_port;
  if (master_port == 0) master_port = FreeLoopbackPort();
  if (master_port <= 0) {
    std::fprintf(stderr, "libtorch_ddp: no free loopback port for the TCPStore\n");
    return 1;
  }
  InstallForwardingHandlers();
  std::vector<pid_t> pids;
  if (!StartRanks(options, master_port, &pids)) {
    WatchRanks(pids);
    return 1;
  }
  std::printf("libtorch_ddp: launched %d ranks (TCPStore on %s:%d)\n", options.world_size,
              options.master_addr.c_str(), master_port);
  std::fflush(stdout);
  return WatchRanks(pids) ? 0 : 1;
}

}  // namespace ddp_example
