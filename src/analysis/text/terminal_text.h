// Text from a capture or a peer (event, marker, host and thread names,
// warnings, stat values) made safe to print on a terminal: the one place
// that escapes it for the CLI's human-readable output, so that a crafted
// file cannot retitle the terminal, clear it or forge a line. As `less`
// and git show such bytes, control characters become visible escapes:
//   C0 (0x00-0x1F, the line break included unless kept) and DEL: \xHH
//     (ESC is \x1b, a carriage return \x0d);
//   C1 (U+0080-U+009F, which some terminals obey as ESC sequences): \u00HH;
//   bytes that are not UTF-8: U+FFFD, as every reader of our files sees them.
// A backslash stays as it is, so the escaping is for reading, not reversible:
// CSV and JSON outputs keep the exact text under their own escaping.
#ifndef NEURONPROF_SRC_ANALYSIS_TEXT_TERMINAL_TEXT_H_
#define NEURONPROF_SRC_ANALYSIS_TEXT_TERMINAL_TEXT_H_

#include <string>
#include <string_view>

namespace neuronprof {
namespace analysis {

enum class LineBreaks { kEscape, kKeep };

// `text` with its control characters escaped; with LineBreaks::kKeep, for a
// whole report, '\n' stays a line break.
std::string TerminalText(std::string_view text, LineBreaks breaks = LineBreaks::kEscape);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_TEXT_TERMINAL_TEXT_H_
