#pragma once
// The plain types of the client report (ReportBuilder makes them from a project; `nova report` writes
// them as report.json and hands them to the worker, which renders HTML and PDF from them and computes
// nothing). Every figure names the stored result it came from ("result 12", "model_check 3"), or says
// "not measured" and why. Grouped here because they are fields without behaviour; the JSON they make
// is described by resources/report/report.schema.json.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nova {

// One number of the report: its value, unit, 95% interval where there is one, the text people read
// (ratios through format_ratio, so a slower result never reads 1.00x), and the stored result it came
// from. Without a value, `text` is "not measured" and `missing` says why.
struct ReportFigure {
  std::optional<double> value;
  std::string unit;  // "x", "us", "mJ", "share", "GB/s", "GFLOP/s", "s", "tokens", "USD"
  std::optional<double> low, high;
  std::string text;
  std::string source;   // "result 12", "model_check 3", "estimate from results 4, 7", ...
  std::string missing;  // why there is no value

  // A ratio (speedup) with its interval where there is one: "1.52x [1.50, 1.55]"; under 1 cut, not rounded.
  static ReportFigure ratio(double value, std::optional<double> low, std::optional<double> high, std::string source);
  // A measured quantity: "12.3 us", "4.22 mJ", "83% of the copy".
  static ReportFigure quantity(double value, std::string unit, std::string source);
  static ReportFigure not_measured(std::string why);
};

// A line of the environment, method, cost or reproduction sections: "not recorded" where a result lacks it.
struct ReportFact {
  std::string label, text, source;
};

// A check that ran (or not) on a version or the whole model.
struct ReportCheck {
  std::string name;
  std::string outcome;  // "passed", "failed", "not recorded" (no stored result says)
  std::string detail, source;
};

struct ReportOp {
  int node = 0;
  std::string op, target, shapes, dtypes;  // shapes: "[16, 256, 768] -> [16, 256, 3072]"
};

// The timing of one variant in one mode of a benchmark (median and interquartile range, n).
struct ReportTiming {
  std::string variant, mode, metric;
  double median = 0, q1 = 0, q3 = 0;
  int n = 0;
  std::string source;
};

// One dot of the roofline: a version (or eager) as measured cold.
struct ReportRooflinePoint {
  std::string label;  // "v12 (builtin: gemm)", "eager"
  int group_id = 0;
  double flops = 0, bytes = 0, seconds = 0;
  std::string source;
};

struct ReportVersion {
  std::int64_t id = 0;
  std::string origin;  // "builtin: pointwise", "llm: local/qwen round 2", "user edit of v3"
  std::string origin_kind;
  std::string validation;  // "passed 5 trials", "not validated"
  std::string verdict;     // the benchmark's sentence, or "not measured"
  std::string validation_source, benchmark_source;
};

struct ReportCorrectness {
  std::string verdict;  // "passed 5 trials", ...
  int trials = 0, trials_passed = 0;
  std::vector<std::string> shapes_tested;
  ReportFigure max_abs_vs_eager, max_rel_vs_eager, max_abs_vs_fp64, eager_max_abs_vs_fp64;
  std::string tolerance;  // "float32: atol = rtol = 0.0001; ..."
  bool closer_to_exact = false;
  std::string source;
};

struct ReportGroup {
  int group_id = 0;
  std::string kind;
  std::string outcome;  // GroupOutcome's word
  std::string reason;
  std::vector<ReportOp> ops;
  double flops = 0, bytes = 0;  // intake's estimate at the group's boundary
  std::optional<std::int64_t> shipped;   // the version that ships; unset: PyTorch is kept
  std::optional<std::int64_t> measured;  // the version whose figures follow (the shipped, else the best measured)
  std::vector<ReportVersion> versions;
  std::optional<ReportCorrectness> correctness;
  std::vector<ReportTiming> timings;
  ReportFigure cold_vs_eager, wall_vs_eager, cold_vs_compile, wall_vs_compile;
  ReportFigure bandwidth_share;  // of the copy reference measured alongside (cold)
  ReportFigure achieved_bandwidth, achieved_flop_rate;
  ReportFigure energy_eager, energy_version, energy_compile;  // mJ per call
  // The group's cold GPU time per call with PyTorch (eager) and with what ships (eager where kept).
  ReportFigure time_before, time_after;
  std::vector<ReportRooflinePoint> roofline;
  std::vector<ReportCheck> checks;
  std::vector<std::string> flags;
  std::vector<std::string> reproduce;  // commands
};

// The first page: the whole model as measured by `nova check-package`, else "not measured" and
// Amdahl's estimate from the groups (marked as an estimate).
struct ReportHeadline {
  ReportFigure cold_vs_eager, wall_vs_eager, cold_vs_compile, wall_vs_compile;
  ReportFigure time_before, time_after;      // cold GPU time per call, eager and optimized
  ReportFigure energy_before, energy_after;  // mJ per call
  ReportFigure amdahl_estimate;
  std::string whole_model_note;  // where the figures come from
  std::string package;           // the package measured, or "not exported"
  std::vector<int> groups_accelerated;
  std::vector<std::pair<int, std::string>> groups_left;  // group, why PyTorch is kept
};

// One stretch of a bar of the GPU time split: a shipped group, or everything else of the call.
struct ReportSplitSegment {
  std::optional<int> group;  // unset: the rest (groups left to PyTorch, nodes outside every group)
  std::string label;
  double us = 0;  // GPU time per call
};

// One bar of the split: the model before (eager) or after (ModelNew), as profiled.
struct ReportSplitSide {
  std::string label;
  double total_us = 0;
  std::vector<ReportSplitSegment> segments;
};

// The whole model's GPU time per call split by fusion group, before and after, from the profile
// `nova check-package` stored with its check; or `missing` says why there is none.
struct ReportTimeSplit {
  std::string source, missing, method;
  std::optional<double> plain_before_us;  // the uninstrumented Model's total, beside the split's
  std::vector<ReportSplitSide> sides;
};

struct ReportFlag {
  std::string text, source, resolution;
};

struct ReportSamples {
  std::string source, variant, mode, metric;
  std::vector<double> samples;
};

struct ReportData {
  int format = 1;
  std::string generated_at;  // UTC, ISO 8601
  std::string model_name, model_path, project;
  int nodes = 0;
  std::string capture_route;
  bool model_unchanged = true;
  ReportHeadline headline;
  std::vector<ReportGroup> groups;
  ReportTimeSplit time_split;
  // The roofline's lines: the copy reference's bandwidth (the fastest measured, cold) and the peak FLOP
  // rate (nova does not measure one yet: "not measured").
  ReportFigure roofline_bandwidth, roofline_peak_flop_rate;
  std::vector<ReportFact> environment, method, cost, versions;
  std::vector<ReportCheck> integrity;
  std::vector<ReportFlag> flags;
  std::vector<std::string> reproduce;
  std::vector<std::string> problems;  // what the report lacks or cannot state, in plain words
  std::vector<ReportSamples> samples;  // the raw samples of every figure's result (the appendix)
};

void to_json(nlohmann::json& j, const ReportFigure& f);
void to_json(nlohmann::json& j, const ReportFact& f);
void to_json(nlohmann::json& j, const ReportCheck& c);
void to_json(nlohmann::json& j, const ReportOp& o);
void to_json(nlohmann::json& j, const ReportTiming& t);
void to_json(nlohmann::json& j, const ReportRooflinePoint& p);
void to_json(nlohmann::json& j, const ReportVersion& v);
void to_json(nlohmann::json& j, const ReportCorrectness& c);
void to_json(nlohmann::json& j, const ReportGroup& g);
void to_json(nlohmann::json& j, const ReportHeadline& h);
void to_json(nlohmann::json& j, const ReportTimeSplit& s);
void to_json(nlohmann::json& j, const ReportFlag& f);
void to_json(nlohmann::json& j, const ReportSamples& s);
void to_json(nlohmann::json& j, const ReportData& d);

}  // namespace nova
