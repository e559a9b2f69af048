#include "src/analysis/text/report_table.h"

#include <iterator>

#include "fmt/format.h"
#include "src/analysis/text/text_table.h"

namespace neuronprof {
namespace analysis {

Cell Cell::Int(int64_t value) {
  Cell cell(Kind::kInt);
  cell.int_ = value;
  return cell;
}

Cell Cell::Number(double value, int significant) {
  Cell cell(Kind::kNumber);
  cell.number_ = value;
  cell.significant_ = significant;
  return cell;
}

Cell Cell::Micros(double ps) {
  Cell cell(Kind::kMicros);
  cell.number_ = ps;
  return cell;
}

Cell Cell::Text(std::string text) {
  Cell cell(Kind::kText);
  cell.text_ = std::move(text);
  return cell;
}

std::string Cell::Csv() const {
  switch (kind_) {
    case Kind::kEmpty: return "";
    case Kind::kInt: return fmt::format("{}", int_);
    case Kind::kNumber:
      return significant_ > 0 ? fmt::format("{:.{}g}", number_, significant_)
                              : fmt::format("{}", number_);
    case Kind::kMicros: return fmt::format("{:.3f}", number_ / 1e6);
    case Kind::kText: return CsvField(text_);
  }
  return "";
}

std::string FormatCsv(const ReportTable& table) {
  fmt::memory_buffer out;
  auto to = std::back_inserter(out);
  for (size_t i = 0; i < table.columns.size(); ++i) {
    fmt::format_to(to, "{}{}", i == 0 ? "" : ",", CsvField(table.columns[i]));
  }
  out.push_back('\n');
  for (const auto& row : table.rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      fmt::format_to(to, "{}{}", i == 0 ? "" : ",", row[i].Csv());
    }
    out.push_back('\n');
  }
  return fmt::to_string(out);
}

}  // namespace analysis
}  // namespace neuronprof
