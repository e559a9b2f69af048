#include "src/collectors/host/stack_symbolizer.h"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
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

// "dir/build/../src/x.cc" as "dir/src/x.cc": clang's line tables join the
// build folder and the path it was given.
std::string CleanPath(const char* path) {
  return std::filesystem::path(path).lexically_normal().string();
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
        "libneuronprof_cupti.so", "libtorch.so", "libtorch_cpu.so", "libtorch_cuda.so", "libc10.so",
        "libc10_cuda.so"}) {
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

// The subprogram, inlined calls and blocks that hold `addr` below `parent`,
// outermost first, looking inside namespaces and types. libdw's
// dwarf_getscopes finds none in clang's DWARF 5 (elfutils 0.188).
void AppendScopesAt(Dwarf_Die* parent, Dwarf_Addr addr, std::vector<Dwarf_Die>* chain) {
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) return;
  do {
    switch (dwarf_tag(&child)) {
      case DW_TAG_namespace:
      case DW_TAG_class_type:
      case DW_TAG_structure_type:
      case DW_TAG_union_type: {
        const size_t before = chain->size();
        AppendScopesAt(&child, addr, chain);
        if (chain->size() > before) return;
        break;
      }
      case DW_TAG_subprogram:
      case DW_TAG_inlined_subroutine:
      case DW_TAG_lexical_block:
        if (dwarf_haspc(&child, addr) == 1) {
          chain->push_back(child);
          AppendScopesAt(&child, addr, chain);
          return;
        }
        break;
      default:
        break;
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

// The scopes at `addr` in compile unit `cu`, innermost first.
std::vector<Dwarf_Die> ScopesAt(Dwarf_Die* cu, Dwarf_Addr addr) {
  std::vector<Dwarf_Die> chain;
  AppendScopesAt(cu, addr, &chain);
  std::reverse(chain.begin(), chain.end());
  return chain;
}

// The source frames at `addr` (module-relative) in compile unit `cu`
// (functions inlined there first), from DWARF; empty without a line table.
std::vector<SourceFrame> SourceFrames(Dwarf_Die* cu, Dwarf_Addr addr) {
  std::vector<SourceFrame> frames;
  Dwarf_Line* line = dwarf_getsrc_die(cu, addr);
  SourceFrame innermost;
  const char* file = line != nullptr ? dwarf_linesrc(line, nullptr, nullptr) : nullptr;
  if (file == nullptr || dwarf_lineno(line, &innermost.line) != 0) return frames;
  innermost.file = CleanPath(file);
  frames.push_back(innermost);
  const std::vector<Dwarf_Die> scopes = ScopesAt(cu, addr);
  const int count = static_cast<int>(scopes.size());
  Dwarf_Files* files = nullptr;
  if (count > 0) dwarf_getsrcfiles(cu, &files, nullptr);
  for (int i = 0; i < count; ++i) {
    Dwarf_Die scope = scopes[i];
    const int tag = dwarf_tag(&scope);
    if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram) continue;
    frames.back().function = tag == DW_TAG_subprogram ? "" : DieFunctionName(&scope);
    if (tag == DW_TAG_subprogram) break;
    // The inlined call's site is a line of the enclosing function.
    Dwarf_Attribute attr;
    Dwarf_Word call_file = 0, call_line = 0;
    SourceFrame caller;
    if (dwarf_formudata(dwarf_attr(&scope, DW_AT_call_file, &attr), &call_file) == 0 &&
        files != nullptr) {
      if (const char* name = dwarf_filesrc(files, call_file, nullptr, nullptr))
        caller.file = CleanPath(name);
    }
    if (dwarf_formudata(dwarf_attr(&scope, DW_AT_call_line, &attr), &call_line) == 0) {
      caller.line = static_cast<int>(call_line);
    }
    frames.push_back(caller);
  }
  return frames;
}

// The C runtime's frames below main: on every stack, never the answer.
bool IsProcessStartFrame(std::string_view function) {
  return function == "_start" || StartsWith(function, "__libc_start_");
}

}  // namespace

// libdw finds an address's compile unit through .debug_aranges, which clang
// does not emit by default: the units' own address ranges instead, read
// once per module and searched by address.
struct StackSymbolizer::CompileUnits {
  struct Range {
    Dwarf_Addr low, high;  // [low, high), module-relative
    Dwarf_Off unit;        // The unit's DIE offset.
  };
  Dwarf* dwarf = nullptr;  // Null: no DWARF for this module.
  Dwarf_Addr bias = 0;
  std::vector<Range> ranges;  // Sorted by low.

  // The unit holding `addr`, in `storage`; null when none does.
  Dwarf_Die* Find(Dwarf_Addr addr, Dwarf_Die* storage) const {
    auto after = std::upper_bound(ranges.begin(), ranges.end(), addr,
                                  [](Dwarf_Addr a, const Range& r) { return a < r.low; });
    if (after == ranges.begin() || addr >= std::prev(after)->high) return nullptr;
    return dwarf_offdie(dwarf, std::prev(after)->unit, storage);
  }
};

const StackSymbolizer::CompileUnits& StackSymbolizer::UnitsOf(Dwfl_Module* module) {
  std::unique_ptr<CompileUnits>& units = units_[module];
  if (units != nullptr) return *units;
  units = std::make_unique<CompileUnits>();
  units->dwarf = dwfl_module_getdwarf(module, &units->bias);
  if (units->dwarf == nullptr) return *units;
  Dwarf_Addr bias = 0;
  for (Dwarf_Die* cu = dwfl_module_nextcu(module, nullptr, &bias); cu != nullptr;
       cu = dwfl_module_nextcu(module, cu, &bias)) {
    Dwarf_Addr base = 0, low = 0, high = 0;
    for (ptrdiff_t at = 0; (at = dwarf_ranges(cu, at, &base, &low, &high)) > 0;) {
      if (low < high) units->ranges.push_back({low, high, dwarf_dieoffset(cu)});
    }
  }
  std::sort(
      units->ranges.begin(), units->ranges.end(),
      [](const CompileUnits::Range& a, const CompileUnits::Range& b) { return a.low < b.low; });
  return *units;
}

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
    Dwarf_Addr bias = 0;
    Dwarf_Die unit_storage;
    Dwarf_Die* unit = dwfl_module_addrdie(module, pc, &bias);
    if (unit == nullptr) {
      const CompileUnits& units = UnitsOf(module);
      bias = units.bias;
      unit = units.dwarf != nullptr ? units.Find(pc - bias, &unit_storage) : nullptr;
    }
    const std::vector<SourceFrame> sources =
        unit != nullptr ? SourceFrames(unit, pc - bias) : std::vector<SourceFrame>{};
    for (const SourceFrame& source : sources) {
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
