// `nova profile MODEL.py [--iters N] [--out TRACE.json]`: traces the model on the GPU with CUPTI,
// attributes each kernel to its graph node and prints the hot-op table. `--from-trace` reads a
// recorded .novatrace instead (no GPU needed), refused when it was recorded from another graph;
// without --graph, intake runs first so each row has its bytes and FLOPs; `--overhead` measures the
// tracer's cost.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "core/cli/cli_app.h"
#include "core/cli/cli_error.h"
#include "core/cli/session_cli.h"
#include "core/env/settings.h"
#include "core/graph/intake_runner.h"
#include "core/trace/chrome_trace_export.h"
#include "core/trace/hot_op_ranking.h"
#include "core/trace/profile_runner.h"
#include "core/trace/trace_identity_check.h"
#include "core/trace/trace_reader.h"
#include "core/worker/no_gpu_error.h"
#include "core/worker/worker_client.h"

namespace nova {
namespace {

struct ProfileCliOptions {
  std::string model, out, trace, from_trace, graph, by = "node", api, attribution = "sequence", project;
  bool no_project = false;
  int iters = 20, warmup = 5, rounds = 5, rows = 30;
  bool nvtx = false, cuda_graph = false, overhead = false, json = false;
  double bandwidth = DeviceCeilings{}.bytes_per_s, peak = DeviceCeilings{}.flops_per_s;
  double timeout = 600;  // seconds before each worker (intake, profiling) is stopped
};

ModelGraph load_graph(const std::string& path) {
  if (path.empty()) return {};
  std::ifstream in(path);
  if (!in) throw CliError("cannot read the model graph " + path, 2);
  try {
    return nlohmann::json::parse(in).get<ModelGraph>();
  } catch (const std::exception& e) {
    throw CliError(fmt::format("{} is not a model graph: {}", path, e.what()), 2);
  }
}

// Intake's graph of the model (costs, fusion groups), or an empty graph and a note saying why not:
// the profile then names nodes from the profiling worker's list, without costs.
ModelGraph captured_graph(const std::string& model, std::chrono::milliseconds timeout, std::string* note) {
  try {
    WorkerClient worker(Settings::load().resolved_python());
    IntakeOptions io;
    io.timeout = timeout;
    ModelGraph graph = IntakeRunner(worker).run(model, io);
    for (const auto& w : graph.warnings) std::cerr << "warning: " << w << "\n";
    return graph;
  } catch (const std::exception& e) {
    *note = fmt::format("intake failed, so the rows have no costs: {}", e.what());
    return {};
  }
}

void print_overhead(const nlohmann::json& r) {
  auto line = [](const char* what, const nlohmann::json& m) {
    std::cout << fmt::format("{:<34} untraced {:>9.1f} us/iter   traced {:>9.1f} us/iter   ratio {:.3f}\n",
                             what, m.value("untraced_median_us", 0.0), m.value("traced_median_us", 0.0),
                             m.value("ratio", 0.0));
  };
  line(r["nova"].value("attribution_route", "") == "sequence" ? "nova tracer (CUPTI, sequence)"
                                                              : "nova tracer (CUPTI, node markers)",
       r["nova"]);
  line("torch.profiler (Kineto)", r["kineto"]);
  const auto& inst = r["nova"].value("instrumented_us", nlohmann::json::array());
  if (!inst.empty()) {
    std::vector<double> v = inst.get<std::vector<double>>();
    std::sort(v.begin(), v.end());
    std::cout << fmt::format("(instrumented export, tracer not recording: {:.1f} us/iter)\n",
                             v[v.size() / 2]);
  }
  const auto& markers = r["nova"].value("markers_us", nlohmann::json::array());
  if (!markers.empty()) {
    std::vector<double> v = markers.get<std::vector<double>>();
    std::sort(v.begin(), v.end());
    std::cout << fmt::format("(instrumented export, tracer recording: {:.1f} us/iter)\n", v[v.size() / 2]);
  }
  if (const auto& s = r["nova"].value("sequence", nlohmann::json()); s.is_object())
    std::cout << fmt::format(
        "sequence attribution: {} launches calibrated; traced launches matched {}, "
        "after a skip {}, unmatched {}\n",
        s.value("length", 0), s.value("matched", 0), s.value("resynced", 0), s.value("unmatched", 0));
}

void run(const ProfileCliOptions& o) {
  DeviceCeilings ceilings{o.bandwidth, o.peak};
  ModelGraph graph = load_graph(o.graph);
  ProfileOptions po;
  po.model = o.model;
  po.iters = o.iters;
  po.warmup = o.warmup;
  po.nvtx = o.nvtx;
  po.use_cuda_graph = o.cuda_graph;
  po.api_records = o.api;
  po.attribution = o.attribution;
  po.trace_file = o.trace;
  po.graph = graph;
  po.ceilings = ceilings;
  po.timeout = std::chrono::ceil<std::chrono::milliseconds>(std::chrono::duration<double>(o.timeout));
  if (o.overhead) {
    auto r = ProfileRunner(po).run_overhead(o.iters * 10, o.rounds);
    if (o.json)
      std::cout << r.dump(2) << "\n";
    else
      print_overhead(r);
    return;
  }

  std::shared_ptr<const Trace> trace;
  std::string note;  // about the trace's identity or the graph's costs
  AttributionResult attribution;
  ProfileResult result;
  if (!o.from_trace.empty()) {
    try {
      trace = std::make_shared<Trace>(TraceReader::read(o.from_trace));
    } catch (const std::exception& e) {
      throw CliError(e.what(), 2);
    }
    const std::string name = std::filesystem::path(o.from_trace).filename().string();
    // MODEL.py beside --from-trace and no --graph: intake's graph of the model (no GPU needed), so the
    // rows have their costs, and a trace of another model is refused by its identity below.
    if (graph.nodes.empty() && !o.model.empty()) graph = captured_graph(o.model, po.timeout, &note);
    if (std::string problem = TraceIdentityCheck::problem(*trace, graph, name); !problem.empty())
      throw CliError(problem, 2);
    if (std::string id_note = TraceIdentityCheck::note(*trace, graph, name); !id_note.empty())
      note = note.empty() ? id_note : note + "; " + id_note;
    attribution = Attribution::compute(*trace, graph, ceilings);
  } else {
    if (o.model.empty()) throw CliError("give a model file (or --from-trace FILE.novatrace)", 2);
    if (std::string why; !ProfileRunner::gpu_available(&why))
      throw NoGpuError(std::string(ProfileRunner::kNoGpuMessage) + " [" + why + "]");
    // Intake's graph carries each node's bytes and FLOPs: bandwidth, FLOP rate and headroom.
    if (po.graph.nodes.empty()) po.graph = captured_graph(o.model, po.timeout, &note);
    // The trace is kept in the model's project (opened first: a project that cannot be used is said
    // before minutes of profiling), where the studio finds it.
    std::unique_ptr<ProjectSession> session;
    if (!o.no_project) {
      SessionOptions so;
      so.gpus = 1;
      so.cpu_threads = 1;
      session = SessionCli::open(o.model, o.project, so);
    }
    result = ProfileRunner(po).run();
    trace = result.trace;
    attribution = result.attribution;
    graph = result.graph;
    if (session) {
      try {
        const std::int64_t id = session->add_trace_file(result.trace_file);
        std::cerr << fmt::format("stored in the project {} as trace {}\n", session->project_dir().string(), id);
      } catch (const std::exception& e) {
        throw CliError(fmt::format("the profile ran but could not be stored in the project: {}", e.what()), 2);
      }
    }
  }
  auto rows =
      HotOpRanking::rank(attribution, o.by == "group" ? HotOpRanking::By::Group : HotOpRanking::By::Node);
  if (!o.out.empty()) ChromeTraceExport::write(o.out, *trace, attribution, graph);
  if (o.json) {
    nlohmann::json j = {{"total_gpu_us", attribution.total_gpu_ns / 1e3},
                        {"attributed_fraction", attribution.attributed_fraction},
                        {"iterations", attribution.iterations},
                        {"kernels", trace->kernel_count()},
                        {"dropped_records", trace->stats.dropped_records},
                        {"markers", trace->markers.size()},
                        {"warnings", trace->warnings},
                        {"note", note},
                        {"costs_missing", attribution.costs_missing},
                        {"event_us", result.event_ns / 1e3},
                        {"traced_span_us", result.traced_span_ns / 1e3},
                        {"rows", nlohmann::json::array()}};
    for (const auto& r : rows)
      j["rows"].push_back({{"id", r.id},
                           {"name", r.name},
                           {"gpu_us", r.gpu_ns / 1e3},
                           {"share", r.share},
                           {"calls", r.calls},
                           {"kernels", r.kernels},
                           {"launches", r.launches},
                           {"headroom", r.headroom},
                           {"top_kernels", r.top_kernels}});
    std::cout << j.dump(2) << "\n";
    return;
  }
  const TraceDevice* dev = trace->devices.empty() ? nullptr : &trace->devices.front();
  std::cout << fmt::format(
      "{}: {} kernels, {:.1f} us of GPU time over {} iterations; {:.1f}% attributed to graph "
      "nodes; NVTX markers: {}; dropped records: {}\n",
      dev ? dev->name : "GPU", trace->kernel_count(), attribution.total_gpu_ns / 1e3, attribution.iterations,
      attribution.attributed_fraction * 100, trace->markers.size(), trace->stats.dropped_records);
  if (const nlohmann::json s =
          result.worker.is_object() ? result.worker.value("sequence", nlohmann::json()) : nlohmann::json();
      s.is_object())
    std::cout << fmt::format(
        "attribution by launch sequence: {} launches per calibrated call; traced "
        "launches matched {}, after a skip {}, unmatched {}\n",
        s.value("length", 0), s.value("matched", 0), s.value("resynced", 0), s.value("unmatched", 0));
  if (result.event_ns > 0)
    std::cout << fmt::format("CUDA-event time of the traced iterations {:.1f} us; traced span {:.1f} us\n",
                             result.event_ns / 1e3, result.traced_span_ns / 1e3);
  for (const auto& w : trace->warnings) std::cout << "warning: " << w << "\n";
  if (!note.empty()) std::cout << "note: " << note << "\n";
  std::cout << HotOpRanking::to_text(rows, static_cast<std::size_t>(o.rows));
  std::cout << HotOpRanking::kHeadroomMeaning << "\n";
  const std::size_t shown = std::min(rows.size(), static_cast<std::size_t>(o.rows));
  if (std::any_of(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(shown),
                  [](const OpStats& r) { return r.headroom <= 0 || r.achieved_bytes_per_s <= 0; })) {
    std::cout << HotOpRanking::dash_meaning(attribution);
    if (!attribution.costs_missing.empty())
      std::cout << " (give --graph GRAPH.json, written by `nova intake MODEL.py --json GRAPH.json`)";
    std::cout << "\n";
  }
  if (!o.out.empty()) std::cout << "Chrome trace written to " << o.out << " (open it in ui.perfetto.dev)\n";
}

// The model profiled, or the overhead measured; a machine without a GPU is exit code 3.
void run_or_exit_3(const ProfileCliOptions& o) {
  try {
    run(o);
  } catch (const NoGpuError& e) {
    throw CliError(e.what(), 3);
  }
}

}  // namespace

void add_profile_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("profile", "trace a model on the GPU with CUPTI and rank its hot ops");
  auto o = std::make_shared<ProfileCliOptions>();
  cmd->add_option("model", o->model, "the model file (KernelBench form)");
  cmd->add_option("--iters", o->iters, "traced iterations")->check(CLI::PositiveNumber);
  cmd->add_option("--warmup", o->warmup, "untraced warm-up iterations")->check(CLI::NonNegativeNumber);
  cmd->add_option("--out", o->out, "write a Chrome trace JSON (Perfetto, chrome://tracing)");
  cmd->add_option("--trace", o->trace, "keep the raw .novatrace file here");
  cmd->add_option("--from-trace", o->from_trace, "read a recorded .novatrace instead of running the model (no GPU needed; with the model file, intake gives each row its costs, and a trace of another model is refused)");
  SessionCli::add_store_options(*cmd, o->project, o->no_project);
  cmd->add_option("--graph", o->graph, "model graph JSON from intake (node names, costs, fusion groups)");
  cmd->add_option("--by", o->by, "rank graph nodes or fusion groups")
      ->check(CLI::IsMember({"node", "group"}));
  cmd->add_option("--api", o->api, "also record API calls: runtime, driver or runtime,driver (costly)");
  cmd->add_option("--attribution", o->attribution,
                  "how kernels get their node: sequence (the model runs as is; launches matched by name to "
                  "one calibration call of the instrumented export: least overhead), callback (every "
                  "node bracketed by markers, launch callbacks read them), external (CUPTI external "
                  "correlation ids) or both")
      ->check(CLI::IsMember({"sequence", "callback", "external", "both"}));
  cmd->add_option("--timeout", o->timeout, "seconds before the intake and the profiling worker are each stopped (default 600)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--rows", o->rows, "rows of the table to print");
  cmd->add_option("--bandwidth", o->bandwidth, "memory bandwidth ceiling, bytes/s (default: H200 measured)");
  cmd->add_option("--peak", o->peak, "FLOP/s ceiling (default: H200 fp32 measured)");
  cmd->add_option("--rounds", o->rounds, "with --overhead: interleaved rounds");
  cmd->add_flag("--nvtx", o->nvtx, "also push an NVTX range per node");
  cmd->add_flag("--cuda-graph", o->cuda_graph, "replay the traced iterations as a CUDA graph");
  cmd->add_flag("--overhead", o->overhead, "measure traced against untraced wall time, and torch.profiler's");
  cmd->add_flag("--json", o->json, "print JSON");
  cmd->callback([o] { run_or_exit_3(*o); });
}

}  // namespace nova
