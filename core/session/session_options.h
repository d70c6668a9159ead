#pragma once
// What a ProjectSession is opened with, and the options of the jobs it runs (generate, evaluate).
// Plain values, filled from the CLI's flags or the studio's settings.
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace nova {

struct SessionOptions {
  std::filesystem::path model;    // the client's model file
  std::filesystem::path project;  // the project folder; empty: the model's own (project_folder_for)
  std::string python;             // the workers' interpreter; empty: Settings
  int gpus = 1;                   // GPU lanes, devices 0..gpus-1 (CUDA_VISIBLE_DEVICES per worker)
  int validations_per_device = 4; // validations side by side on one device
  int cpu_threads = 2;            // builds (NVRTC, nvcc) in parallel
  bool keep_standby = false;      // keep a worker started ahead (long-lived owners: the studio)
  std::string bwrap = "bwrap";    // bubblewrap, the sandbox for LLM-written code (core/sandbox/)
  // A Ray cluster ("host:port"): GPU work runs there as tasks of one GPU each (nova_worker/ray_lane.py);
  // `gpus` is then the number of tasks at once. Empty: this machine's GPUs.
  std::string ray_address;
  std::string ray_gpu_kind;       // the cluster's GPU kind to use (empty: its only one)
};

struct GenerateOptions {
  std::string arch;               // empty: the first GPU's, else sm_90
  int sm_count = 0;               // 0: the first GPU's, else 132
  bool gemm_tf32x3 = false;       // the tensor-core GEMM as the primary of fp32 linear layers and convolutions
  bool alternatives = true;       // write each group's alternatives too
  bool regenerate = false;        // generate every group again (else only missing or outdated groups)
  std::vector<int> groups;        // empty: every group of the graph
};

// How a version is evaluated: validation, then (if it passed) the benchmark.
struct EvaluateOptions {
  enum class Steps { validate_and_bench, validate, bench };
  Steps steps = Steps::validate_and_bench;
  int trials = 5;
  int seed = 1234;
  bool second_shape = true;
  bool match_eager = false;  // the strict tolerance rule only (docs/VERIFY.md, "The tolerance policy")
  std::vector<std::string> modes{"cold", "warm", "graph"};
  std::vector<std::string> baselines{"eager", "compile"};
  bool copy_reference = true;
  std::string l2_flush = "clean";
  std::string arch;  // empty: the first GPU's
  std::chrono::milliseconds build_budget{std::chrono::minutes(10)};
  std::chrono::milliseconds gpu_budget{std::chrono::minutes(5)};
};

// How an exported package is checked as a whole model (`nova check-package`).
struct PackageCheckOptions {
  std::filesystem::path package_dir;  // the folder `nova export --out` wrote
  int trials = 3;
  int seed = 1234;
  bool match_eager = false;
  std::vector<std::string> modes{"cold", "wall"};
  std::string l2_flush = "clean";
  std::chrono::milliseconds build_budget{std::chrono::minutes(30)};
  std::chrono::milliseconds gpu_budget{std::chrono::minutes(15)};
  bool build_only = false;  // build the package into the project's cache and stop (no GPU needed)
};

}  // namespace nova
