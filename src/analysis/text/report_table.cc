#include "src/analysis/text/report_table.h"

#include <cmath>
#include <cstdlib>
#include <iterator>
#include <string>

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

namespace {

// "5.49413e+10" -> "54941300000", "-1.5e-07" -> "-0.00000015": the same
// digits without an exponent, as CSV readers and spreadsheets take numbers.
std::string WithoutExponent(std::string text) {
  const size_t e = text.find_first_of("eE");
  if (e == std::string::npos) return text;
  const int exponent = std::atoi(text.c_str() + e + 1);
  std::string sign, digits;
  int point = -1;  // digits before the decimal point
  for (size_t i = 0; i < e; ++i) {
    const char c = text[i];
    if (c == '-') {
      sign = "-";
    } else if (c == '.') {
      point = static_cast<int>(digits.size());
    } else if (c >= '0' && c <= '9') {
      digits.push_back(c);
    }
  }
  if (point < 0) point = static_cast<int>(digits.size());
  point += exponent;
  if (point <= 0) {
    digits.insert(0, static_cast<size_t>(-point), '0');
    point = 0;
  } else if (point > static_cast<int>(digits.size())) {
    digits.append(static_cast<size_t>(point) - digits.size(), '0');
  }
  std::string whole = digits.substr(0, static_cast<size_t>(point));
  std::string fraction = digits.substr(static_cast<size_t>(point));
  while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
  const size_t nonzero = whole.find_first_not_of('0');
  whole = nonzero == std::string::npos ? "0" : whole.substr(nonzero);
  return sign + whole + (fraction.empty() ? "" : "." + fraction);
}

}  // namespace

std::string Cell::Csv() const {
  switch (kind_) {
    case Kind::kEmpty:
      return "";
    case Kind::kInt:
      return fmt::format("{}", int_);
    case Kind::kNumber:
      if (!std::isfinite(number_)) return "";  // unknown: no number to give
      return WithoutExponent(significant_ > 0 ? fmt::format("{:.{}g}", number_, significant_)
                                              : fmt::format("{}", number_));
    case Kind::kMicros:
      return fmt::format("{:.3f}", number_ / 1e6);
    case Kind::kText:
      return CsvField(text_);
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
