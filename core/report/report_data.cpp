#include "core/report/report_data.h"

#include <cmath>

#include <fmt/format.h>

#include "core/verify/benchmark_verdict.h"

namespace nova {
namespace {

// Three significant digits, as people read a measured figure.
std::string significant(double value) {
  if (value == 0) return "0";
  const double magnitude = std::floor(std::log10(std::fabs(value)));
  const int decimals = std::max(0, 2 - static_cast<int>(magnitude));
  return fmt::format("{:.{}f}", value, decimals);
}

nlohmann::json optional_number(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

}  // namespace

ReportFigure ReportFigure::ratio(double value, std::optional<double> low, std::optional<double> high,
                                 std::string source) {
  ReportFigure f;
  f.value = value;
  f.unit = "x";
  f.low = low;
  f.high = high;
  f.text = format_ratio(value);
  if (low && high) f.text += fmt::format(" [{}, {}]", format_ratio(*low), format_ratio(*high));
  f.source = std::move(source);
  return f;
}

ReportFigure ReportFigure::quantity(double value, std::string unit, std::string source) {
  ReportFigure f;
  f.value = value;
  f.text = unit == "share" ? fmt::format("{:.0f}%", value * 100) : significant(value) + " " + unit;
  f.unit = std::move(unit);
  f.source = std::move(source);
  return f;
}

ReportFigure ReportFigure::not_measured(std::string why) {
  ReportFigure f;
  f.text = "not measured";
  f.missing = std::move(why);
  return f;
}

void to_json(nlohmann::json& j, const ReportFigure& f) {
  j = {{"value", optional_number(f.value)}, {"unit", f.unit},    {"low", optional_number(f.low)},
       {"high", optional_number(f.high)},   {"text", f.text},    {"source", f.source},
       {"missing", f.missing}};
}

void to_json(nlohmann::json& j, const ReportFact& f) { j = {{"label", f.label}, {"text", f.text}, {"source", f.source}}; }

void to_json(nlohmann::json& j, const ReportCheck& c) {
  j = {{"name", c.name}, {"outcome", c.outcome}, {"detail", c.detail}, {"source", c.source}};
}

void to_json(nlohmann::json& j, const ReportOp& o) {
  j = {{"node", o.node}, {"op", o.op}, {"target", o.target}, {"shapes", o.shapes}, {"dtypes", o.dtypes}};
}

void to_json(nlohmann::json& j, const ReportTiming& t) {
  j = {{"variant", t.variant}, {"mode", t.mode}, {"metric", t.metric}, {"median", t.median},
       {"q1", t.q1},           {"q3", t.q3},     {"n", t.n},           {"source", t.source}};
}

void to_json(nlohmann::json& j, const ReportRooflinePoint& p) {
  j = {{"label", p.label}, {"group", p.group_id}, {"flops", p.flops},
       {"bytes", p.bytes}, {"seconds", p.seconds}, {"source", p.source}};
}

void to_json(nlohmann::json& j, const ReportVersion& v) {
  j = {{"id", v.id},           {"origin", v.origin},   {"origin_kind", v.origin_kind},
       {"validation", v.validation}, {"verdict", v.verdict}, {"validation_source", v.validation_source},
       {"benchmark_source", v.benchmark_source}};
}

void to_json(nlohmann::json& j, const ReportCorrectness& c) {
  j = {{"verdict", c.verdict},
       {"trials", c.trials},
       {"trials_passed", c.trials_passed},
       {"shapes_tested", c.shapes_tested},
       {"max_abs_vs_eager", c.max_abs_vs_eager},
       {"max_rel_vs_eager", c.max_rel_vs_eager},
       {"max_abs_vs_fp64", c.max_abs_vs_fp64},
       {"eager_max_abs_vs_fp64", c.eager_max_abs_vs_fp64},
       {"tolerance", c.tolerance},
       {"closer_to_exact", c.closer_to_exact},
       {"source", c.source}};
}

void to_json(nlohmann::json& j, const ReportGroup& g) {
  j = {{"group", g.group_id},
       {"kind", g.kind},
       {"outcome", g.outcome},
       {"reason", g.reason},
       {"ops", g.ops},
       {"flops", g.flops},
       {"bytes", g.bytes},
       {"shipped", g.shipped ? nlohmann::json(*g.shipped) : nlohmann::json()},
       {"measured", g.measured ? nlohmann::json(*g.measured) : nlohmann::json()},
       {"versions", g.versions},
       {"correctness", g.correctness ? nlohmann::json(*g.correctness) : nlohmann::json()},
       {"timings", g.timings},
       {"speedups",
        {{"cold_vs_eager", g.cold_vs_eager},
         {"wall_vs_eager", g.wall_vs_eager},
         {"cold_vs_compile", g.cold_vs_compile},
         {"wall_vs_compile", g.wall_vs_compile}}},
       {"bandwidth_share", g.bandwidth_share},
       {"achieved_bandwidth", g.achieved_bandwidth},
       {"achieved_flop_rate", g.achieved_flop_rate},
       {"energy", {{"eager", g.energy_eager}, {"version", g.energy_version}, {"compile", g.energy_compile}}},
       {"time_before", g.time_before},
       {"time_after", g.time_after},
       {"roofline", g.roofline},
       {"checks", g.checks},
       {"flags", g.flags},
       {"reproduce", g.reproduce}};
}

void to_json(nlohmann::json& j, const ReportHeadline& h) {
  nlohmann::json left = nlohmann::json::array();
  for (const auto& [group, why] : h.groups_left) left.push_back({{"group", group}, {"reason", why}});
  j = {{"speedups",
        {{"cold_vs_eager", h.cold_vs_eager},
         {"wall_vs_eager", h.wall_vs_eager},
         {"cold_vs_compile", h.cold_vs_compile},
         {"wall_vs_compile", h.wall_vs_compile}}},
       {"time_before", h.time_before},
       {"time_after", h.time_after},
       {"energy_before", h.energy_before},
       {"energy_after", h.energy_after},
       {"amdahl_estimate", h.amdahl_estimate},
       {"whole_model_note", h.whole_model_note},
       {"package", h.package},
       {"groups_accelerated", h.groups_accelerated},
       {"groups_left", left}};
}

void to_json(nlohmann::json& j, const ReportTimeSplit& s) {
  nlohmann::json sides = nlohmann::json::array();
  for (const auto& side : s.sides) {
    nlohmann::json segments = nlohmann::json::array();
    for (const auto& seg : side.segments)
      segments.push_back({{"group", seg.group ? nlohmann::json(*seg.group) : nlohmann::json(nullptr)},
                          {"label", seg.label},
                          {"us", seg.us}});
    sides.push_back({{"label", side.label}, {"total_us", side.total_us}, {"segments", segments}});
  }
  j = {{"source", s.source},
       {"missing", s.missing},
       {"method", s.method},
       {"plain_before_us", s.plain_before_us ? nlohmann::json(*s.plain_before_us) : nlohmann::json(nullptr)},
       {"sides", sides}};
}

void to_json(nlohmann::json& j, const ReportFlag& f) {
  j = {{"text", f.text}, {"source", f.source}, {"resolution", f.resolution}};
}

void to_json(nlohmann::json& j, const ReportSamples& s) {
  j = {{"source", s.source}, {"variant", s.variant}, {"mode", s.mode}, {"metric", s.metric}, {"samples", s.samples}};
}

void to_json(nlohmann::json& j, const ReportData& d) {
  j = {{"format", d.format},
       {"generated_at", d.generated_at},
       {"model", {{"name", d.model_name}, {"path", d.model_path}, {"nodes", d.nodes},
                  {"capture_route", d.capture_route}, {"unchanged_since_intake", d.model_unchanged}}},
       {"project", d.project},
       {"headline", d.headline},
       {"groups", d.groups},
       {"time_split", d.time_split},
       {"roofline", {{"bandwidth", d.roofline_bandwidth}, {"peak_flop_rate", d.roofline_peak_flop_rate}}},
       {"environment", d.environment},
       {"method", d.method},
       {"integrity", d.integrity},
       {"flags", d.flags},
       {"cost", d.cost},
       {"reproduce", d.reproduce},
       {"versions", d.versions},
       {"problems", d.problems},
       {"samples", d.samples}};
}

}  // namespace nova
