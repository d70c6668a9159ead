// `nova intake MODEL.py [--json OUT] [--inputs-dir DIR] [--python PY] [--timeout S] [--project DIR |
// --no-project]`: captures the model's graph in a worker, prints a summary, writes the ModelGraph JSON
// and stores the graph with the model's source in the project (the studio's for this model by
// default), so a graph captured on a GPU server opens in the studio.
#include <fstream>
#include <iostream>
#include <map>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "core/cli/cli_app.h"
#include "core/cli/cli_error.h"
#include "core/cli/evaluation_cli.h"
#include "core/cli/session_cli.h"
#include "core/env/input_file.h"
#include "core/env/settings.h"
#include "core/graph/intake_runner.h"

namespace nova {
namespace {

std::string human(double v, const char* unit) {
  const char* prefixes[] = {"", "K", "M", "G", "T", "P"};
  int i = 0;
  while (v >= 1000 && i < 5) {
    v /= 1000;
    ++i;
  }
  return fmt::format("{:.1f} {}{}", v, prefixes[i], unit);
}

std::string shape_text(const TensorInfo& t) {
  return fmt::format("{}[{}]", t.dtype, fmt::join(t.shape, ","));
}

void print_summary(const ModelGraph& g, double seconds, std::ostream& out) {
  out << fmt::format("model: {} ({} form), captured by {}\n", g.model_path, g.model_form, g.capture_route);
  for (const auto& in : g.inputs) out << fmt::format("  input {} {}\n", in.name, shape_text(in));
  for (const auto& s : g.scalar_inputs)
    out << fmt::format("  scalar input #{} {} = {}\n", s.value("index", 0), s.value("name", ""),
                       s.contains("value") ? s["value"].dump() : "?");
  std::vector<std::pair<std::string, int>> by_op;
  for (const auto& n : g.nodes) {
    auto it = std::find_if(by_op.begin(), by_op.end(), [&](const auto& p) { return p.first == n.op; });
    if (it == by_op.end())
      by_op.emplace_back(n.op, 1);
    else
      ++it->second;
  }
  std::vector<std::string> parts;
  for (const auto& [op, count] : by_op) parts.push_back(count > 1 ? fmt::format("{} x{}", op, count) : op);
  out << fmt::format("nodes ({}): {}\n", g.nodes.size(), fmt::join(parts, ", "));
  out << fmt::format("fusion groups ({}):\n", g.groups.size());
  for (const auto& grp : g.groups) {
    std::vector<std::string> ops;
    for (int id : grp.nodes)
      if (const GraphNode* n = g.node(id)) ops.push_back(n->op);
    out << fmt::format("  #{} {:<14} {}  ({}, {} at the boundary)\n", grp.id, grp.kind, fmt::join(ops, ", "),
                       human(grp.flops, "FLOP"), human(grp.bytes, "B"));
  }
  double values = 0, bytes = 0;
  for (const auto& p : g.params) {
    double n = 1;
    for (auto d : p.tensor.shape) n *= static_cast<double>(d);
    values += n;
    int width = p.tensor.dtype == "float64" || p.tensor.dtype == "int64"                            ? 8
                : p.tensor.dtype == "float16" || p.tensor.dtype == "bfloat16"                       ? 2
                : p.tensor.dtype == "bool" || p.tensor.dtype == "int8" || p.tensor.dtype == "uint8" ? 1
                                                                                                    : 4;
    bytes += n * width;
  }
  out << fmt::format("parameters: {} tensors, {:.0f} values, {}\n", g.params.size(), values,
                     human(bytes, "B"));
  for (const auto& w : g.warnings) out << "warning: " << w << "\n";
  if (!g.saved_inputs.empty()) out << "example inputs saved to " << g.saved_inputs << "\n";
  out << fmt::format("intake took {:.2f} s\n", seconds);
}

}  // namespace

void add_intake_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("intake", "capture a model's graph, costs and fusion groups");
  struct Opts {
    std::string model, json_out, inputs_dir, python, project;
    double timeout = 600;
    bool no_project = false;
  };
  auto opts = std::make_shared<Opts>();
  cmd->add_option("model", opts->model, "the model file (Model, get_inputs, get_init_inputs)")->required();
  cmd->add_option("--json", opts->json_out, "write the model graph as JSON here");
  cmd->add_option("--inputs-dir", opts->inputs_dir,
                  "save example inputs and parameters (safetensors) here (default: beside --json)");
  cmd->add_option("--python", opts->python, "worker interpreter (default: from the settings)");
  cmd->add_option("--timeout", opts->timeout, "seconds before the worker is stopped")
      ->check(CLI::PositiveNumber);
  SessionCli::add_store_options(*cmd, opts->project, opts->no_project);
  cmd->callback([opts] {
    try {
      InputFile::require_python_model(opts->model);
    } catch (const std::invalid_argument& e) {
      throw CliError(e.what(), 2);
    }
    std::string python = opts->python.empty() ? Settings::load().resolved_python() : opts->python;
    WorkerClient worker(python);
    IntakeRunner runner(worker);
    IntakeOptions o;
    // Whole seconds or finer, whatever the option holds, rounded up: 0.5 s must not become 0.
    o.timeout = std::chrono::ceil<decltype(o.timeout)>(std::chrono::duration<double>(opts->timeout));
    o.inputs_dir = opts->inputs_dir;
    if (o.inputs_dir.empty() && !opts->json_out.empty())
      o.inputs_dir = std::filesystem::absolute(opts->json_out).parent_path();
    ModelGraph graph;
    try {
      graph = runner.run(opts->model, o, EvaluationCli::console_progress());
    } catch (const std::invalid_argument& e) {
      throw CliError(e.what(), 2);
    } catch (const WorkerError& e) {
      if (e.kind() == WorkerError::Kind::UserError) {
        if (!e.traceback().empty()) std::cerr << e.traceback() << (e.traceback().back() == '\n' ? "" : "\n");
        throw CliError(e.what(), 2);
      }
      std::string tail = worker.stderr_tail(2000);
      if (!tail.empty()) std::cerr << "worker log (tail):\n" << tail << "\n";
      throw CliError(e.what(), 1);
    }
    if (!opts->json_out.empty()) {
      std::ofstream f(opts->json_out);
      if (!f) throw CliError(fmt::format("cannot write {}", opts->json_out), 2);
      f << nlohmann::json(graph).dump(2) << "\n";
      if (!f) throw CliError(fmt::format("cannot write {}", opts->json_out), 2);
    }
    print_summary(graph, runner.last_seconds(), std::cout);
    if (!opts->json_out.empty()) std::cout << "graph written to " << opts->json_out << "\n";
    if (!opts->no_project) {
      SessionOptions s;
      s.python = python;
      auto session = SessionCli::open(opts->model, opts->project, s);
      session->import_graph(graph);
      std::cout << "graph stored in project " << session->project_dir().string() << "\n";
    }
  });
}

}  // namespace nova
