#include "core/export/export_planner.h"

#include <algorithm>
#include <array>
#include <map>
#include <regex>

#include <fmt/format.h>

#include "core/export/export_error.h"
#include "core/gen/code_text.h"
#include "core/select/selection_policy.h"
#include "core/session/project_evidence.h"
#include "core/session/stored_generation.h"

namespace nova {
namespace {

const VersionEvidence* find_version(const GroupEvidence& e, std::int64_t id) {
  for (const auto& v : e.versions)
    if (v.version_id == id) return &v;
  return nullptr;
}

}  // namespace

std::string ExportPlanner::why_not_shippable(const VersionEvidence& v) {
  if (v.generator_declined) return "the generator wrote no kernel for it (" + *v.generator_declined + ")";
  if (!v.validation) return "it was never validated";
  if (!v.validation->passed) return "it failed validation (" + v.validation->verdict + ")";
  if (!v.benchmark) return "it was never benchmarked against eager";
  const BenchmarkVerdict& verdict = v.benchmark->verdict;
  switch (verdict.kind) {
    case VerdictKind::ships: return "";
    case VerdictKind::tie: return "it ties eager, and a tie is not a win (" + verdict.sentence + ")";
    case VerdictKind::declined: return "its benchmark declined it (" + verdict.sentence + ")";
    case VerdictKind::unmeasured: return "its benchmark has no cold and wall comparison with eager";
  }
  return "its benchmark verdict is unknown";
}

std::string ExportPlanner::default_package_name(const std::string& model_path) {
  std::string stem = std::filesystem::path(model_path).stem().string(), name = "nova_";
  for (unsigned char c : stem) name += std::isalnum(c) && c < 128 ? char(std::tolower(c)) : '_';
  return name;
}

void ExportPlanner::check_package_name(const std::string& name) {
  static const std::array<const char*, 35> keywords = {
      "False", "None",  "True",   "and",    "as",     "assert", "async",    "await", "break",
      "class", "continue", "def", "del",    "elif",   "else",   "except",   "finally", "for",
      "from",  "global", "if",    "import", "in",     "is",     "lambda",   "nonlocal", "not",
      "or",    "pass",  "raise",  "return", "try",    "while",  "with",     "yield"};
  if (!is_c_identifier(name) || name.size() > 100)
    throw ExportError(fmt::format("the package name '{}' is not a Python identifier (letters, digits and '_', "
                                  "not starting with a digit; up to 100 characters)",
                                  cpp_string_body(name)));
  if (std::find(keywords.begin(), keywords.end(), name) != keywords.end())
    throw ExportError("the package name '" + name + "' is a Python keyword");
  if (name == "torch" || name == "aten" || name == "prim" || name == "_C")
    throw ExportError("the package name '" + name + "' is taken by PyTorch: choose another with --name");
}

void ExportPlanner::check_arch_list(const std::string& list) {
  static const std::regex arch(R"(^[0-9]{1,2}\.[0-9][af]?(\+PTX)?(;[0-9]{1,2}\.[0-9][af]?(\+PTX)?)*$)");
  if (!std::regex_match(list, arch))
    throw ExportError(fmt::format("the architecture list '{}' is not in TORCH_CUDA_ARCH_LIST form, e.g. "
                                  "\"8.0;9.0+PTX\"",
                                  cpp_string_body(list)));
}

ExportPlan ExportPlanner::plan(const ProjectStore& store, bool model_unchanged, const ExportOptions& options) {
  auto model = store.model();
  if (!model || model->graph_json.empty())
    throw ExportError(fmt::format("the project at {} holds no graph yet: run `nova optimize` first",
                                  store.folder().string()));
  if (!model_unchanged)
    throw ExportError(fmt::format("{} changed since its intake: the project's versions were made for the old "
                                  "text. Run `nova optimize` on the model again, then export",
                                  model->path));
  ExportPlan plan;
  plan.package_name = options.package_name.empty() ? default_package_name(model->path) : options.package_name;
  check_package_name(plan.package_name);
  check_arch_list(options.arch_list);
  plan.arch_list = options.arch_list;
  plan.model_path = model->path;
  plan.model_source = model->source;
  try {
    plan.graph = nlohmann::json::parse(model->graph_json).get<ModelGraph>();
  } catch (const std::exception& e) {
    throw ExportError(fmt::format("the project's graph cannot be read ({}): run `nova optimize` again", e.what()));
  }

  const std::vector<GroupEvidence> evidence = ProjectEvidence::read(store, plan.graph);
  plan.selection = SelectionPolicy::select(evidence);

  // The user's explicit choices (the studio's, or choose_for_export), by graph group id.
  std::map<int, std::int64_t> chosen;
  for (const auto& v : store.export_choices())
    if (auto sc = stored_candidate(store, v.id)) chosen[sc->group.id] = v.id;

  const bool exported_graph = plan.graph.capture_route == "torch.export";
  for (std::size_t i = 0; i < plan.graph.groups.size(); ++i) {
    const FusionGroup& group = plan.graph.groups[i];
    const GroupEvidence& e = evidence[i];
    ExportGroup out;
    out.group_id = group.id;
    out.kind = group.kind;
    const GroupSelection* sel = plan.selection.group(group.id);
    std::optional<std::int64_t> version;
    if (auto it = chosen.find(group.id); it != chosen.end()) {
      const VersionEvidence* v = find_version(e, it->second);
      std::string why = v ? why_not_shippable(*v) : "it is not a version of the group in the current graph";
      if (!why.empty())
        throw ExportError(fmt::format("version {} chosen for export in group {} cannot be exported: {}. Choose "
                                      "another version, or none to keep PyTorch for the group",
                                      it->second, group.id, why));
      version = it->second;
      out.reason = "chosen for export; " + v->benchmark->verdict.sentence;
    } else if (sel && sel->chosen) {
      version = sel->chosen;
      out.reason = sel->reason;
    } else {
      out.reason = sel ? sel->reason : "the project holds no version of this group";
    }
    if (version && !exported_graph) {
      out.reason = fmt::format("the model was captured by {}, not torch.export, so the package cannot find the "
                               "group's nodes in the client's forward; the group runs PyTorch",
                               plan.graph.capture_route);
      version.reset();
    }
    if (version) {
      auto sc = stored_candidate(store, *version);
      if (!sc)
        throw ExportError(fmt::format("version {} of group {} has no launch plan in the project: generate the "
                                      "group again (`nova optimize`)",
                                      *version, group.id));
      if (sc->candidate.path == "full") {
        const std::string why = fmt::format("version {} is a full-path torch extension (an LLM's answer in "
                                            "KernelBench's ModelNew form), which the package does not ship yet",
                                            *version);
        if (chosen.count(group.id))
          throw ExportError(why + ". Choose another version, or none to keep PyTorch for the group");
        out.reason = why + "; the group runs PyTorch";
        plan.groups.push_back(std::move(out));
        continue;
      }
      if (sc->group.functional_source != group.functional_source || sc->group.inputs != group.inputs ||
          sc->group.outputs != group.outputs)
        throw ExportError(fmt::format("version {} was made for group {} as it was before the model changed: the "
                                      "group no longer matches the model file. Run `nova optimize` again",
                                      *version, group.id));
      const VersionEvidence* v = find_version(e, *version);
      out.version_id = version;
      out.candidate = std::move(sc->candidate);
      out.rule = v ? v->rule : "";
      if (v && v->benchmark) out.benchmark = v->benchmark;
    }
    plan.groups.push_back(std::move(out));
  }
  return plan;
}

}  // namespace nova
