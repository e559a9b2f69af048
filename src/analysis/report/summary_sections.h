// `neuronprof summary`'s output: the op table, the time share per framework
// op, the step breakdown and memory as text, and the op and memory tables
// as CSV.
#ifndef NEURONPROF_SRC_ANALYSIS_REPORT_SUMMARY_SECTIONS_H_
#define NEURONPROF_SRC_ANALYSIS_REPORT_SUMMARY_SECTIONS_H_

#include <string>

#include "src/analysis/memory/memory_report.h"
#include "src/analysis/ops/op_table.h"
#include "src/analysis/report/summary.h"
#include "src/analysis/text/report_table.h"

namespace neuronprof {
namespace analysis {

// `top`: rows of the op table and of the time share printed (the rest is
// folded into one line), and the longest `top` steps; <= 0 prints all.
std::string FormatSummaryText(const Summary& summary, int top);

// "operators": every row; times in microseconds, FLOPs and bytes as
// integers (empty when every call's cost is unknown).
ReportTable OpReportTable(const OpTable& table);
std::string FormatOpTableCsv(const OpTable& table);  // its CSV

// "memory": the memory-by-operator rows of every allocator, bytes as
// integers.
ReportTable MemoryReportTable(const MemoryReport& memory);
std::string FormatMemoryCsv(const MemoryReport& memory);  // its CSV

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_REPORT_SUMMARY_SECTIONS_H_
