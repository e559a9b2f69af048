// CSV cells as spreadsheets and CSV readers take them: quoted where the
// text needs it, and never run as a formula.
#include "src/analysis/text/text_table.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "src/analysis/text/report_table.h"

namespace neuronprof {
namespace {

using analysis::Cell;
using analysis::CsvField;

TEST_CASE("CSV text is quoted where it holds a comma, a quote or a line break") {
  CHECK(CsvField("aten::addmm") == "aten::addmm");
  CHECK(CsvField("a,b") == "\"a,b\"");
  CHECK(CsvField("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(CsvField("two\nlines") == "\"two\nlines\"");
  CHECK(CsvField("") == "");
}

TEST_CASE("CSV text a spreadsheet would run as a formula is written as text") {
  CHECK(CsvField("=HYPERLINK(\"http://x\",\"click\")") ==
        "\"'=HYPERLINK(\"\"http://x\"\",\"\"click\"\")\"");
  CHECK(CsvField("@SUM(A1)*cmd|' /C calc'!A0") == "\"'@SUM(A1)*cmd|' /C calc'!A0\"");
  CHECK(CsvField("+1+1") == "\"'+1+1\"");
  CHECK(CsvField("-2+3") == "\"'-2+3\"");
  CHECK(CsvField("\tx") == "\"'\tx\"");
  CHECK(CsvField("\rx") == "\"'\rx\"");
  CHECK(CsvField("a=b") == "a=b");  // Only a first character starts a formula.
}

TEST_CASE("CSV numbers stay numbers, negative ones included") {
  CHECK(Cell::Int(-5).Csv() == "-5");
  CHECK(Cell::Micros(-240353000.0).Csv() == "-240.353");
  CHECK(Cell::Text("-5").Csv() == "\"'-5\"");  // A name, not a number.
  analysis::ReportTable table{"t", {"=name", "value"}, {{Cell::Text("=1+1"), Cell::Int(-1)}}};
  CHECK(analysis::FormatCsv(table) == "\"'=name\",value\n\"'=1+1\",-1\n");
}

TEST_CASE("CSV numbers are plain decimals, never with an exponent") {
  CHECK(Cell::Number(5.49413e10, 6).Csv() == "54941300000");
  CHECK(Cell::Number(1.5e-7, 6).Csv() == "0.00000015");
  CHECK(Cell::Number(-2.5e12).Csv() == "-2500000000000");
  CHECK(Cell::Number(1e21).Csv() == "1000000000000000000000");
  CHECK(Cell::Number(0.5, 6).Csv() == "0.5");
  CHECK(Cell::Number(12.25).Csv() == "12.25");
  CHECK(Cell::Number(0).Csv() == "0");
  CHECK(Cell::Number(std::nan("")).Csv() == "");
}

}  // namespace
}  // namespace neuronprof
