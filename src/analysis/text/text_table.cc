#include "src/analysis/text/text_table.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <string_view>

#include "absl/strings/str_replace.h"
#include "src/analysis/text/terminal_text.h"

namespace neuronprof {
namespace analysis {

std::string Us(int64_t ps) { return fmt::format("{:.3f}", ps / 1e6); }
std::string Ms(int64_t ps) { return fmt::format("{:.3f}", ps / 1e9); }

std::string Si(double value) {
  static const char* const kUnits[] = {"", "K", "M", "G", "T", "P", "E"};
  int unit = 0;
  while (std::fabs(value) >= 1000 && unit < 6) {
    value /= 1000;
    ++unit;
  }
  return unit == 0 ? fmt::format("{:.0f}", value) : fmt::format("{:.2f}{}", value, kUnits[unit]);
}

std::string Shorten(const std::string& text, size_t width) {
  if (text.size() <= width) return text;
  return text.substr(0, width - 3) + "...";
}

std::string CsvField(const std::string& text) {
  // A spreadsheet runs a cell that starts with one of these as a formula
  // (=HYPERLINK(...), @SUM(...)): such text is written as text, behind a '.
  const bool formula =
      !text.empty() && std::string_view("=+-@\t\r").find(text[0]) != std::string_view::npos;
  const std::string cell = formula ? "'" + text : text;
  if (!formula && cell.find_first_of(",\"\r\n") == std::string::npos) return cell;
  return fmt::format("\"{}\"", absl::StrReplaceAll(cell, {{"\"", "\"\""}}));
}

std::string Percent(int64_t part, int64_t whole) {
  return whole > 0 ? fmt::format("{:.1f}%", 100.0 * part / whole) : "-";
}

std::string Bytes(int64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (std::fabs(value) >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.2f} {}", value, kUnits[unit]);
}

void TextTable::Add(std::vector<std::string> row) {
  for (std::string& cell : row) cell = TerminalText(cell);
  rows_.push_back(std::move(row));
}

void TextTable::RenderTo(fmt::memory_buffer& out) const {
  std::vector<size_t> width(right_.size(), 0);
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  for (const auto& row : rows_) {
    fmt::memory_buffer line;
    fmt::format_to(std::back_inserter(line), " ");
    for (size_t i = 0; i < row.size(); ++i) {
      if (right_[i]) {
        fmt::format_to(std::back_inserter(line), " {:>{}}", row[i], width[i]);
      } else {
        fmt::format_to(std::back_inserter(line), " {:<{}}", row[i], width[i]);
      }
    }
    size_t end = line.size();
    while (end > 0 && line[end - 1] == ' ') --end;
    out.append(line.data(), line.data() + end);
    out.push_back('\n');
  }
}

}  // namespace analysis
}  // namespace neuronprof
