// The multi-rank report as text and CSV (`neuronprof summary` of a job's run).
#ifndef NEURONPROF_SRC_ANALYSIS_REPORT_RANK_SECTIONS_H_
#define NEURONPROF_SRC_ANALYSIS_REPORT_RANK_SECTIONS_H_

#include <string>

#include "src/analysis/ranks/rank_report.h"

namespace neuronprof {
namespace analysis {

// `top`: rows of the per-step table (<= 0: all).
std::string FormatRankReportText(const RankReport& report, int top);
// Every rank's every step, header first; times in microseconds.
std::string FormatRankStepsCsv(const RankReport& report);
std::string FormatCollectivesCsv(const RankReport& report);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_REPORT_RANK_SECTIONS_H_
