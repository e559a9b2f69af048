// A summary table as data: named columns and typed cells, written as CSV
// here and as JSON by the CLI (tools/summary_json), so both say the same.
#ifndef NEURONPROF_SRC_ANALYSIS_TEXT_REPORT_TABLE_H_
#define NEURONPROF_SRC_ANALYSIS_TEXT_REPORT_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace neuronprof {
namespace analysis {

class Cell {
 public:
  enum class Kind { kEmpty, kInt, kNumber, kMicros, kText };

  static Cell Empty() { return Cell(Kind::kEmpty); }
  static Cell Int(int64_t value);
  // CSV text: `significant` digits ({:.6g}), or 0 for the shortest text
  // that reads back as the same double.
  static Cell Number(double value, int significant = 0);
  // Picoseconds shown as microseconds with 3 decimals ("267.000").
  static Cell Micros(double ps);
  static Cell Text(std::string text);

  Kind kind() const { return kind_; }
  int64_t int_value() const { return int_; }
  double number() const { return number_; }
  const std::string& text() const { return text_; }
  // The CSV field: numbers as plain decimals (never an exponent), text
  // quoted when it holds , " or a newline, empty cells (and numbers that
  // are not finite) empty. A kMicros cell's text is a JSON number too.
  std::string Csv() const;

 private:
  explicit Cell(Kind kind) : kind_(kind) {}
  Kind kind_;
  int64_t int_ = 0;
  double number_ = 0;
  int significant_ = 0;
  std::string text_;
};

struct ReportTable {
  std::string name;  // file stem and JSON key: "markers", "operators", ...
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;  // each as many cells as columns
};

// Header line, then one line per row.
std::string FormatCsv(const ReportTable& table);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_TEXT_REPORT_TABLE_H_
