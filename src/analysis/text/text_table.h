// Text helpers that every report of `neuronprof summary` shares: number
// cells (time units, SI suffixes, binary sizes, percentages), CSV fields
// and the aligned text table.
#ifndef NEURONPROF_SRC_ANALYSIS_TEXT_TEXT_TABLE_H_
#define NEURONPROF_SRC_ANALYSIS_TEXT_TEXT_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "fmt/format.h"

namespace neuronprof {
namespace analysis {

std::string Us(int64_t ps);  // picoseconds as "12.345" microseconds
std::string Ms(int64_t ps);  // picoseconds as "12.345" milliseconds
// 1234567 -> "1.23M".
std::string Si(double value);
// "1.50 MiB", "512 B".
std::string Bytes(int64_t bytes);
std::string Shorten(const std::string& text, size_t width);  // "abc..." past width
// A CSV field: quoted when it holds , " CR or LF; text a spreadsheet would
// run as a formula (a first = + - @ TAB or CR) quoted behind a '.
std::string CsvField(const std::string& text);
std::string Percent(int64_t part, int64_t whole);  // "12.5%", "-" when whole <= 0

// Left-aligned text columns, right-aligned numbers. Columns are as wide as
// their longest cell in bytes; fmt pads by display width, so a cell holding
// multi-byte UTF-8 still lines up.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header, std::vector<bool> right)
      : right_(std::move(right)) {
    rows_.push_back(std::move(header));
  }
  // Cells hold names from the capture: their control characters are
  // escaped (terminal_text.h), so a cell stays one cell on one line.
  void Add(std::vector<std::string> row);
  void RenderTo(fmt::memory_buffer& out) const;

 private:
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_TEXT_TEXT_TABLE_H_
