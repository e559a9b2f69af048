#include "tools/summary_json.h"

#include "src/export/byte_sink.h"
#include "src/export/json_text.h"

namespace neuronprof {
namespace tools {
namespace {

using analysis::Cell;
namespace json = exporter::json;

void WriteCell(const Cell& cell, json::Writer& out) {
  switch (cell.kind()) {
    case Cell::Kind::kEmpty:
      out.Raw("null");
      break;
    case Cell::Kind::kInt:
      out.Int(cell.int_value());
      break;
    case Cell::Kind::kNumber:
      out.Double(cell.number());
      break;
    case Cell::Kind::kMicros:
      out.Raw(cell.Csv());
      break;  // "267.000"
    case Cell::Kind::kText:
      out.String(cell.text());
      break;
  }
}

void WriteTable(const analysis::ReportTable& table, json::Writer& out) {
  out.Char('[');
  for (size_t r = 0; r < table.rows.size(); ++r) {
    out.Raw(r == 0 ? "{" : ",{");
    for (size_t c = 0; c < table.columns.size(); ++c) {
      if (c > 0) out.Char(',');
      out.String(table.columns[c]);
      out.Char(':');
      WriteCell(table.rows[r][c], out);
    }
    out.Char('}');
  }
  out.Char(']');
}

}  // namespace

std::string SummaryJson(const std::string& input, const std::string& selection,
                        const analysis::Summary& summary,
                        const std::vector<analysis::ReportTable>& tables) {
  exporter::StringSink sink;
  json::Writer out(&sink);
  out.Raw("{\"format\":\"neuronprof.summary/1\",\"input\":");
  out.String(input);
  out.Raw(",\"selection\":");
  if (selection.empty()) {
    out.Raw("null");
  } else {
    out.String(selection);
  }
  out.Raw(",\"clamped_events\":");
  out.Int(summary.clamped_events);
  // What the capture lost (a window that ended early, drops, ...).
  out.Raw(",\"warnings\":[");
  for (size_t i = 0; i < summary.capture_warnings.size(); ++i) {
    if (i > 0) out.Char(',');
    out.String(summary.capture_warnings[i]);
  }
  out.Raw("],\"tails\":[");
  for (size_t i = 0; i < summary.tails.size(); ++i) {
    if (i > 0) out.Char(',');
    out.String(analysis::TailSentence(summary.tails[i]));
  }
  out.Raw("],\"tables\":{");
  for (size_t i = 0; i < tables.size(); ++i) {
    if (i > 0) out.Char(',');
    out.String(tables[i].name);
    out.Char(':');
    WriteTable(tables[i], out);
  }
  out.Raw("}}\n");
  (void)out.Finish();  // a StringSink never fails
  return sink.text();
}

}  // namespace tools
}  // namespace neuronprof
