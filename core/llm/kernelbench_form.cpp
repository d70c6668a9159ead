#include "core/llm/kernelbench_form.h"

#include <chrono>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/env/resource_paths.h"
#include "core/worker/child_process.h"

namespace nova {

ParsedAnswer KernelBenchForm::read(const std::string& python_source, const Candidate& base) const {
  ParsedAnswer out;
  out.model_new_source = python_source;
  if (python_.empty()) {
    out.problem = "the answer is in KernelBench's ModelNew form, which needs the workers' Python to be read, and "
                  "none was given";
    return out;
  }
  nlohmann::json inputs = nlohmann::json::array();
  for (const auto& t : base.plan.inputs) inputs.push_back(t.name);
  const nlohmann::json request = {{"source", python_source}, {"inputs", inputs}};
  auto env = ChildProcess::minimal_env();
  env["PYTHONPATH"] = python_package_dir().string();
  ProcessResult r;
  try {
    r = ChildProcess::run({python_, "-m", "nova_worker.kernelbench_form"}, env, std::chrono::seconds(60),
                          request.dump());
  } catch (const std::exception& e) {
    out.problem = fmt::format("reading the ModelNew form needs {}, which cannot run: {}", python_, e.what());
    return out;
  }
  if (r.timed_out || !r.status.exited || r.status.code != 0) {
    out.problem = fmt::format("reading the ModelNew form with {} failed ({}): {}", python_,
                              r.timed_out ? "after 60 s" : r.status.describe(), r.err.substr(0, 300));
    return out;
  }
  const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  if (!j.is_object() || !(j.contains("problem") || j.contains("extension_source"))) {
    out.problem = "reading the ModelNew form gave no answer: " + r.out.substr(0, 200);
    return out;
  }
  if (j.contains("problem")) {
    out.problem = j["problem"].get<std::string>();
    return out;
  }
  Candidate c = base;
  c.declined.reset();
  c.path = "full";
  c.origin.answer_form = "model_new";
  c.cuda_source.clear();
  c.plan.temps.clear();
  c.plan.steps.clear();
  c.extension_source = j["extension_source"].get<std::string>();
  c.summary += fmt::format("; KernelBench's ModelNew form, forward = {}({})",
                           j.value("function", std::string("?")),
                           fmt::join(j.value("arguments", std::vector<std::string>{}), ", "));
  for (const auto& note : j.value("notes", std::vector<std::string>{})) c.summary += "; " + note;
  out.candidate = std::move(c);
  return out;
}

}  // namespace nova
