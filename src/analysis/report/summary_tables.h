// Every table of a single-host summary as report tables, for
// `neuronprof summary --csv/--csv_dir/--json` and the in-process API.
#ifndef NEURONPROF_SRC_ANALYSIS_REPORT_SUMMARY_TABLES_H_
#define NEURONPROF_SRC_ANALYSIS_REPORT_SUMMARY_TABLES_H_

#include <string>
#include <vector>

#include "src/analysis/report/summary.h"
#include "src/analysis/text/report_table.h"

namespace neuronprof {
namespace analysis {

// In this order: operators, time_share, steps, step_stats, tails, markers,
// async_spans, counters, instants, memory, kernels, recommendations.
// Tables without rows are included.
std::vector<ReportTable> SummaryTables(const Summary& summary);

// The names above, in that order.
std::vector<std::string> SummaryTableNames();

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_REPORT_SUMMARY_TABLES_H_
