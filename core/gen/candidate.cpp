#include "core/gen/candidate.h"

#include <stdexcept>

namespace nova {
using nlohmann::json;

void to_json(json& j, const CandidateOrigin& o) {
  j = {{"kind", o.kind},         {"rule", o.rule},
       {"provider", o.provider}, {"model", o.model},
       {"round", o.round},       {"parent_version", o.parent_version ? json(*o.parent_version) : json()}};
  if (!o.answer_form.empty()) j["answer_form"] = o.answer_form;
}
void from_json(const json& j, CandidateOrigin& o) {
  o.kind = j.value("kind", "");
  o.rule = j.value("rule", "");
  o.provider = j.value("provider", "");
  o.model = j.value("model", "");
  o.round = j.value("round", 0);
  if (j.contains("parent_version") && !j["parent_version"].is_null())
    o.parent_version = j["parent_version"].get<int>();
  o.answer_form = j.value("answer_form", "");
}

void to_json(json& j, const PlanTensor& t) { j = {{"name", t.name}, {"shape", t.shape}, {"dtype", t.dtype}}; }
void from_json(const json& j, PlanTensor& t) {
  t.name = j.value("name", "");
  t.shape = j.value("shape", std::vector<std::int64_t>{});
  t.dtype = j.value("dtype", "float32");
}

void to_json(json& j, const PlanArg& a) {
  j = json::object();
  if (!a.ref.empty()) {
    j["ref"] = a.ref;
    if (!a.view.empty()) j["view"] = a.view;
  } else {
    j["scalar_type"] = a.scalar_type;
    j["scalar"] = a.scalar;
  }
}
void from_json(const json& j, PlanArg& a) {
  a.ref = j.value("ref", "");
  a.view = j.value("view", "");
  a.scalar_type = j.value("scalar_type", "");
  a.scalar = j.contains("scalar") ? j["scalar"] : json();
}

void to_json(json& j, const PlanStep& s) {
  j = {{"type", s.type}, {"args", s.args}};
  if (s.type == "kernel") {
    j["kernel"] = s.kernel;
    j["grid"] = s.grid;
    j["block"] = s.block;
    j["shared_bytes"] = s.shared_bytes;
  } else {
    j["op"] = s.op;
    j["kwargs"] = s.kwargs;
    j["out"] = s.out;
  }
}
void from_json(const json& j, PlanStep& s) {
  s.type = j.at("type").get<std::string>();
  if (s.type != "kernel" && s.type != "library")
    throw std::runtime_error("launch plan step of unknown type '" + s.type + "'");
  s.kernel = j.value("kernel", "");
  s.grid = j.value("grid", std::array<std::int64_t, 3>{1, 1, 1});
  s.block = j.value("block", std::array<std::int64_t, 3>{1, 1, 1});
  s.shared_bytes = j.value("shared_bytes", std::int64_t{0});
  s.op = j.value("op", "");
  s.args = j.value("args", std::vector<PlanArg>{});
  s.kwargs = j.value("kwargs", json::object());
  s.out = j.value("out", "");
}

void to_json(json& j, const LaunchPlan& p) {
  j = {{"inputs", p.inputs}, {"outputs", p.outputs}, {"temps", p.temps}, {"steps", p.steps}};
}
void from_json(const json& j, LaunchPlan& p) {
  p.inputs = j.value("inputs", std::vector<PlanTensor>{});
  p.outputs = j.value("outputs", std::vector<PlanTensor>{});
  p.temps = j.value("temps", std::vector<PlanTensor>{});
  p.steps = j.value("steps", std::vector<PlanStep>{});
}

void to_json(json& j, const Candidate& c) {
  j = {{"format", "nova.candidate"},
       {"version", 1},
       {"group_id", c.group_id},
       {"model_path", c.model_path},
       {"origin", c.origin},
       {"summary", c.summary},
       {"cuda_source", c.cuda_source},
       {"nvrtc_options", c.nvrtc_options},
       {"plan", c.plan},
       {"extension_source", c.extension_source},
       {"library_ops", c.library_ops},
       {"declined", c.declined ? json(*c.declined) : json()}};
  if (c.path != "fast") j["path"] = c.path;
}
void from_json(const json& j, Candidate& c) {
  if (j.value("format", "") != "nova.candidate") throw std::runtime_error("not a Nova candidate file");
  c.group_id = j.value("group_id", -1);
  c.model_path = j.value("model_path", "");
  c.origin = j.value("origin", CandidateOrigin{});
  c.summary = j.value("summary", "");
  c.cuda_source = j.value("cuda_source", "");
  c.nvrtc_options = j.value("nvrtc_options", std::vector<std::string>{});
  c.plan = j.value("plan", LaunchPlan{});
  c.extension_source = j.value("extension_source", "");
  c.library_ops = j.value("library_ops", std::vector<std::string>{});
  if (j.contains("declined") && !j["declined"].is_null()) c.declined = j["declined"].get<std::string>();
  c.path = j.value("path", "fast");
  if (c.path != "fast" && c.path != "full")
    throw std::runtime_error("a candidate's path is \"fast\" or \"full\", not \"" + c.path + "\"");
}

}  // namespace nova
