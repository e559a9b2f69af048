// Symbolizes the call stacks that markers and operators record
// (internal::kStackKey) into the text of the stat "stack": one frame a
// line, innermost first, "function (file:line)". Each distinct address is
// looked up once (libdw: the process's modules as mapped now, their symbol
// tables and DWARF line tables), so a capture pays per call site, not per
// event. Frames of the profiler and of libtorch's dispatcher that lead up
// to the recording are left out: a stack starts at the code that made the
// marker or called the operator; the C runtime's frames below main are
// left out too.
#ifndef NEURONPROF_SRC_COLLECTORS_HOST_STACK_SYMBOLIZER_H_
#define NEURONPROF_SRC_COLLECTORS_HOST_STACK_SYMBOLIZER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"

struct Dwfl;
struct Dwfl_Module;

namespace neuronprof {
namespace collectors {

class StackSymbolizer {
 public:
  StackSymbolizer();
  ~StackSymbolizer();
  StackSymbolizer(const StackSymbolizer&) = delete;
  StackSymbolizer& operator=(const StackSymbolizer&) = delete;

  // `raw`: return addresses, 8 bytes each, innermost first (a trailing
  // partial address is ignored). "" when no frame is left.
  std::string Symbolize(std::string_view raw);

 private:
  struct Frame {
    std::string text;  // "function (file:line)"
    bool recorder;     // neuronprof's or libtorch's own frame.
  };
  // The frames of one return address: functions inlined at it first,
  // then the function that holds it.
  const std::vector<Frame>& Lookup(uint64_t return_address);

  struct CompileUnits;  // A module's compile units by address.
  const CompileUnits& UnitsOf(Dwfl_Module* module);

  Dwfl* dwfl_ = nullptr;  // Null when libdw could not read the process.
  absl::flat_hash_map<uint64_t, std::vector<Frame>> frames_;
  absl::flat_hash_map<const Dwfl_Module*, std::unique_ptr<CompileUnits>> units_;
};

}  // namespace collectors
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_COLLECTORS_HOST_STACK_SYMBOLIZER_H_
