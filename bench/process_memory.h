// The process's memory as the benchmarks report it (Linux /proc).
#pragma once

#include <fstream>
#include <string>

namespace neuronprof::bench {

// A "<key>: N kB" line of /proc/self/status, in MB (VmRSS: resident now;
// VmHWM: the peak since the last ResetPeakRss()); 0 when absent.
inline double ProcStatusMb(const std::string& key) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(key, 0) == 0) return std::stod(line.substr(key.size())) / 1024.0;
  }
  return 0;
}

// Starts a new peak at the current RSS (Linux: clear_refs 5), so VmHWM
// measures only what follows.
inline void ResetPeakRss() { std::ofstream("/proc/self/clear_refs") << "5"; }

}  // namespace neuronprof::bench
