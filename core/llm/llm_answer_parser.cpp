#include "core/llm/llm_answer_parser.h"

#include <regex>
#include <vector>

#include <fmt/format.h>

#include "core/env/fnv1a.h"
#include "core/verify/static_checker.h"

namespace nova {
namespace {

struct Fence {
  std::string language, body;
};

// Every fenced block (``` or ~~~), with its info string's first word in lower case.
std::vector<Fence> fences(const std::string& text) {
  std::vector<Fence> out;
  static const std::regex open(R"((^|\n)[ \t]*(```|~~~)[ \t]*([A-Za-z0-9_+.-]*)[^\n]*\n)");
  auto begin = text.cbegin();
  std::smatch m;
  while (std::regex_search(begin, text.cend(), m, open)) {
    const std::string marker = m[2].str();
    std::string language = m[3].str();
    for (auto& c : language) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const auto body_start = m[0].second;
    const std::size_t from = static_cast<std::size_t>(body_start - text.cbegin());
    std::size_t close = text.find("\n" + marker, from - 1);
    if (close == std::string::npos || close < from - 1) {
      out.push_back({language, text.substr(from)});  // unclosed: runs to the end (a cut answer)
      break;
    }
    out.push_back({language, text.substr(from, close + 1 - from)});
    std::size_t after = text.find('\n', close + 1);
    begin = after == std::string::npos ? text.cend() : text.cbegin() + static_cast<std::ptrdiff_t>(after);
  }
  return out;
}

bool is_code(const std::string& language) {
  return language == "cuda" || language == "cu" || language == "cpp" || language == "c++" ||
         language == "c" || language == "cuh";
}

}  // namespace

ParsedAnswer LlmAnswerParser::parse(const std::string& answer, const Candidate& base) {
  ParsedAnswer out;
  const std::vector<Fence> blocks = fences(answer);
  const Fence *code = nullptr, *plan = nullptr, *python = nullptr;
  for (const auto& f : blocks) {
    if (is_code(f.language)) code = &f;
    if (f.language == "json") plan = &f;
    if (f.language == "python" || f.language == "py") python = &f;
  }
  // The fast-path pair wins; without it, a Python block that calls load_inline is KernelBench's form.
  if (!(code && plan) && python && python->body.find("load_inline") != std::string::npos) {
    out.model_new_source = python->body;
    return out;
  }
  if (!code) {
    out.problem =
        "the answer has no ```cuda block with the device code (nor a ```python block in KernelBench's form "
        "that calls load_inline)";
    return out;
  }
  if (code->body.find("__global__") == std::string::npos) {
    out.problem = "the ```cuda block defines no __global__ kernel";
    return out;
  }
  if (!plan) {
    out.problem = "the answer has no ```json block with the launch plan";
    return out;
  }
  const nlohmann::json j = nlohmann::json::parse(plan->body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    out.problem = "the ```json block is not a JSON object";
    return out;
  }
  Candidate c = base;
  c.cuda_source = code->body;
  c.declined.reset();
  try {
    c.plan.temps = j.value("temps", std::vector<PlanTensor>{});
    nlohmann::json steps = j.value("steps", nlohmann::json::array());
    if (!steps.is_array() || steps.empty()) throw std::runtime_error("it has no steps");
    c.plan.steps.clear();
    for (auto step : steps) {
      if (!step.is_object()) throw std::runtime_error("a step is not an object");
      if (!step.contains("type")) step["type"] = "kernel";
      c.plan.steps.push_back(step.get<PlanStep>());
    }
  } catch (const std::exception& e) {
    out.problem = fmt::format("the launch plan cannot be used: {}", e.what());
    return out;
  }
  const std::size_t n_in = c.plan.inputs.size(), n_out = c.plan.outputs.size(), n_tmp = c.plan.temps.size();
  for (const auto& step : c.plan.steps) {
    if (step.type == "kernel" && step.kernel.empty()) {
      out.problem = "a kernel step of the launch plan names no kernel";
      return out;
    }
    for (const auto& arg : step.args) {
      if (arg.ref.empty()) {
        if (arg.scalar_type.empty() || arg.scalar.is_null()) {
          out.problem =
              fmt::format("step {}: an argument is neither a tensor ref nor a typed scalar", step.kernel);
          return out;
        }
        continue;
      }
      static const std::regex ref(R"((input|output|temp):(\d+))");
      std::smatch m;
      if (!std::regex_match(arg.ref, m, ref)) {
        out.problem =
            fmt::format("step {}: argument '{}' is not input:i, output:i or temp:i", step.kernel, arg.ref);
        return out;
      }
      const std::size_t i = std::stoul(m[2].str());
      const std::size_t limit = m[1] == "input" ? n_in : m[1] == "output" ? n_out : n_tmp;
      if (i >= limit) {
        out.problem = fmt::format("step {}: {} does not exist (the group has {} {}s)", step.kernel, arg.ref,
                                  limit, m[1].str());
        return out;
      }
    }
  }
  out.candidate = std::move(c);
  return out;
}

std::string LlmAnswerParser::code_hash(const Candidate& candidate) {
  const bool full = candidate.path == "full";
  std::string code = StaticChecker::strip(full ? candidate.extension_source : candidate.cuda_source);
  std::string squeezed;
  for (char ch : code)
    if (!std::isspace(static_cast<unsigned char>(ch))) squeezed += ch;
  squeezed += '\n';
  squeezed += full ? std::string("full path") : nlohmann::json(candidate.plan).dump();
  return fmt::format("{:016x}", fnv1a64(squeezed));
}

}  // namespace nova
