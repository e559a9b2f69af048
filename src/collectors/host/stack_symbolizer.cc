#include "src/collectors/host/stack_symbolizer.h"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"

namespace neuronprof {
namespace collectors {
namespace {

std::string Demangle(const char* symbol) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> text(
      abi::__cxa_demangle(symbol, nullptr, nullptr, &status), &std::free);
  return status == 0 && text != nullptr ? std::string(text.get()) : std::string(symbol);
}

// absl's string_view is not std's in Debian's abseil.
absl::string_view BaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  if (slash != std::string_view::npos) path.remove_prefix(slash + 1);
  return absl::string_view(path.data(), path.size());
}

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// Frames that lead up to the recording, not the user's code: the marker
// and collector code, and libtorch's dispatcher and RecordFunction.
bool IsRecorderFrame(std::string_view module, std::string_view function) {
  const absl::string_view base = BaseName(module);
  // Whole library names: a program may well be called libtorch_mlp.
  for (std::string_view prefix :
       {"libneuronprof.so", "libneuronprof_markers.so", "libneuronprof_torch.so",
        "libneuronprof_cupti.so", "libtorch.so", "libtorch_cpu.so", "libtorch_cuda.so",
        "libc10.so", "libc10_cuda.so"}) {
    if (StartsWith(std::string_view(base.data(), base.size()), prefix)) return true;
  }
  for (std::string_view prefix : {"neuronprof::ScopedTrace", "neuronprof::internal::",
                                  "neuronprof::collectors::", "neuronprof::StepTrace"}) {
    if (StartsWith(function, prefix)) return true;
  }
  return false;
}

// One source-level frame at an address: the innermost is where the line
// table puts it; each enclosing one is where the inlined call was made.
struct SourceFrame {
  std::string function;  // "" for the out-of-line function (its symbol).
  std::string file;
  int line = 0;
};

// The qualified name of a subprogram or an inlined call's origin.
std::string DieFunctionName(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  for (int name : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name}) {
    if (dwarf_attr_integrate(die, name, &attr) != nullptr) {
      if (const char* linkage = dwarf_formstring(&attr)) return Demangle(linkage);
    }
  }
  const char* plain = dwarf_diename(die);
  return plain != nullptr ? plain : "";
}

// The source frames at `pc` (functions inlined there first), from DWARF;
// empty without a line table.
std::vector<SourceFrame> SourceFrames(Dwfl_Module* module, Dwarf_Addr pc) {
  std::vector<SourceFrame> frames;
  Dwfl_Line* line = dwfl_module_getsrc(module, pc);
  if (line == nullptr) return frames;
  SourceFrame innermost;
  const char* file = dwfl_lineinfo(line, nullptr, &innermost.line, nullptr, nullptr, nullptr);
  if (file == nullptr) return frames;
  innermost.file = file;
  frames.push_back(innermost);
  Dwarf_Addr bias = 0;
  Dwarf_Die* cu = dwfl_module_addrdie(module, pc, &bias);
  Dwarf_Die* scopes = nullptr;
  const int count = cu != nullptr ? dwarf_getscopes(cu, pc - bias, &scopes) : 0;
  Dwarf_Files* files = nullptr;
  if (count > 0) dwarf_getsrcfiles(cu, &files, nullptr);
  for (int i = 0; i < count; ++i) {
    const int tag = dwarf_tag(&scopes[i]);
    if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram) continue;
    frames.back().function = tag == DW_TAG_subprogram ? "" : DieFunctionName(&scopes[i]);
    if (tag == DW_TAG_subprogram) break;
    // The inlined call's site is a line of the enclosing function.
    Dwarf_Attribute attr;
    Dwarf_Word call_file = 0, call_line = 0;
    SourceFrame caller;
    if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &attr), &call_file) == 0 &&
        files != nullptr) {
      if (const char* name = dwarf_filesrc(files, call_file, nullptr, nullptr)) caller.file = name;
    }
    if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &attr), &call_line) == 0) {
      caller.line = static_cast<int>(call_line);
    }
    frames.push_back(caller);
  }
  std::free(scopes);
  return frames;
}

// The C runtime's frames below main: on every stack, never the answer.
bool IsProcessStartFrame(std::string_view function) {
  return function == "_start" || StartsWith(function, "__libc_start_");
}

}  // namespace

StackSymbolizer::StackSymbolizer() {
  static const Dwfl_Callbacks kCallbacks = [] {
    Dwfl_Callbacks callbacks{};
    callbacks.find_elf = dwfl_linux_proc_find_elf;
    callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
    return callbacks;
  }();
  dwfl_ = dwfl_begin(&kCallbacks);
  if (dwfl_ == nullptr) return;
  // The modules mapped now: a library unloaded since it recorded shows as
  // its bare address.
  if (dwfl_linux_proc_report(dwfl_, getpid()) != 0 ||
      dwfl_report_end(dwfl_, nullptr, nullptr) != 0) {
    dwfl_end(dwfl_);
    dwfl_ = nullptr;
  }
}

StackSymbolizer::~StackSymbolizer() {
  if (dwfl_ != nullptr) dwfl_end(dwfl_);
}

const std::vector<StackSymbolizer::Frame>& StackSymbolizer::Lookup(uint64_t return_address) {
  auto it = frames_.find(return_address);
  if (it != frames_.end()) return it->second;
  // The call instruction ends just before the return address.
  const Dwarf_Addr pc = return_address - 1;
  Dwfl_Module* module = dwfl_ != nullptr ? dwfl_addrmodule(dwfl_, pc) : nullptr;
  std::vector<Frame> frames;
  if (module == nullptr) {
    frames.push_back({absl::StrCat("0x", absl::Hex(return_address)), false});
  } else {
    Dwarf_Addr start = 0;
    const char* path =
        dwfl_module_info(module, nullptr, &start, nullptr, nullptr, nullptr, nullptr, nullptr);
    const std::string_view module_name = path != nullptr ? path : "";
    const char* symbol = dwfl_module_addrname(module, pc);
    const std::string outer =
        symbol != nullptr ? Demangle(symbol)
                          : absl::StrCat(BaseName(module_name), "+0x", absl::Hex(pc - start));
    for (const SourceFrame& source : SourceFrames(module, pc)) {
      const std::string function = source.function.empty() ? outer : source.function;
      if (IsProcessStartFrame(function)) continue;
      frames.push_back({absl::StrCat(function, " (", source.file, ":", source.line, ")"),
                        IsRecorderFrame(module_name, function)});
    }
    if (frames.empty() && !IsProcessStartFrame(outer)) {  // No line table: symbol, module.
      frames.push_back({absl::StrCat(outer, " (", BaseName(module_name), ")"),
                        IsRecorderFrame(module_name, outer)});
    }
  }
  return frames_.emplace(return_address, std::move(frames)).first->second;
}

std::string StackSymbolizer::Symbolize(std::string_view raw) {
  std::string text;
  bool leading = true;
  for (size_t at = 0; at + sizeof(uint64_t) <= raw.size(); at += sizeof(uint64_t)) {
    uint64_t address = 0;
    std::memcpy(&address, raw.data() + at, sizeof(address));
    for (const Frame& frame : Lookup(address)) {
      if (leading && frame.recorder) continue;
      leading = false;
      if (!text.empty()) text.push_back('\n');
      text += frame.text;
    }
  }
  return text;
}

}  // namespace collectors
}  // namespace neuronprof
