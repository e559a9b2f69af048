// `neuronprof summary --json`: the whole single-host summary as one JSON
// document, written with the project's one JSON writer.
#ifndef NEURONPROF_TOOLS_SUMMARY_JSON_H_
#define NEURONPROF_TOOLS_SUMMARY_JSON_H_

#include <string>
#include <vector>

#include "src/analysis/report/summary.h"
#include "src/analysis/text/report_table.h"

namespace neuronprof {
namespace tools {

// {"format": "neuronprof.summary/1", "input": FILE, "selection": TEXT or
//  null, "warnings": [...], "tails": [sentence, ...],
//  "tables": {"<name>": [{"<column>": value, ...}, ...], ...}}
// Times in microseconds (numbers), text as strings, empty cells null.
std::string SummaryJson(const std::string& input, const std::string& selection,
                        const analysis::Summary& summary,
                        const std::vector<analysis::ReportTable>& tables);

}  // namespace tools
}  // namespace neuronprof

#endif  // NEURONPROF_TOOLS_SUMMARY_JSON_H_
