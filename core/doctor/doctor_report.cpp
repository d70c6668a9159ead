#include "core/doctor/doctor_report.h"
#include "core/env/build_info.h"

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <cuda_runtime_api.h>
#include <cupti.h>
#include <nvrtc.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/worker/child_process.h"

namespace nova {
namespace {

std::string os_pretty_name() {
  std::ifstream in("/etc/os-release");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      auto v = line.substr(12);
      if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
      return v;
    }
  }
  return "unknown Linux";
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto pos = line.find(':');
      if (pos != std::string::npos) return line.substr(pos + 2);
    }
  }
  return "unknown CPU";
}

std::string version_string(int v) {  // 13000 -> "13.0"
  if (v <= 0) return "none";
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

std::string gib(std::uint64_t bytes) { return fmt::format("{:.1f} GiB", bytes / double(1ull << 30)); }

std::string nvcc_version(const std::string& toolkit) {
  std::string nvcc = toolkit + "/bin/nvcc";
  if (access(nvcc.c_str(), X_OK) != 0) return {};
  try {
    auto r = ChildProcess::run({nvcc, "--version"}, ChildProcess::minimal_env(), std::chrono::seconds(20));
    auto pos = r.out.find("release ");
    if (pos == std::string::npos) return {};
    auto end = r.out.find_first_of(",\n", pos);
    return r.out.substr(pos + 8, end - pos - 8);
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace

std::vector<int> nvrtc_supported_archs() {
  std::vector<int> archs;
  int count = 0;
  if (nvrtcGetNumSupportedArchs(&count) == NVRTC_SUCCESS && count > 0) {
    archs.resize(static_cast<std::size_t>(count));
    if (nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS) archs.clear();
  }
  return archs;
}

DoctorReport collect_doctor_report(const DoctorOptions& options) {
  DoctorReport r;
  r.nova_version = build_info::version();
  r.os = os_pretty_name();
  utsname u{};
  if (uname(&u) == 0) r.kernel = fmt::format("{} {} {}", u.sysname, u.release, u.machine);
  r.cpu = cpu_model();
  r.cpu_cores = static_cast<int>(std::thread::hardware_concurrency());
  r.memory_bytes = static_cast<std::uint64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);

  // The Python probe is the slow part (importing torch): run it while the rest is collected.
  std::optional<std::thread> py_thread;
  if (options.probe_python) py_thread.emplace([&] { r.python = probe_python(options.python); });

  probe_cuda_driver(r);
  cudaRuntimeGetVersion(&r.runtime_version);
  r.cuda_toolkit = options.cuda_toolkit;
  r.nvcc_version = nvcc_version(options.cuda_toolkit);
  nvrtcVersion(&r.nvrtc_major, &r.nvrtc_minor);
  r.nvrtc_archs = nvrtc_supported_archs();
  uint32_t cupti = 0;
  if (cuptiGetVersion(&cupti) == CUPTI_SUCCESS) r.cupti_version = static_cast<int>(cupti);
  probe_libtorch(r);
  if (py_thread) py_thread->join();

  // What is missing, and what it means for the user.
  if (!r.has_gpu())
    r.notes.push_back(
        fmt::format("no CUDA device ({}): intake, generation and export work; profiling, validation and "
                    "benchmarks need a GPU.",
                    r.driver_error.empty() ? "none found" : r.driver_error));
  if (r.has_gpu() && r.driver_version > 0 && r.driver_version < r.runtime_version)
    r.notes.push_back(
        fmt::format("the driver supports CUDA {} but nova was built with CUDA {}: update the driver.",
                    version_string(r.driver_version), version_string(r.runtime_version)));
  if (r.nvcc_version.empty())
    r.notes.push_back(
        fmt::format("nvcc not found under {}: the full (extension) build path and export "
                    "need it; set the CUDA toolkit in the settings.",
                    r.cuda_toolkit));
  if (options.probe_python) {
    if (!r.python.ran)
      r.notes.push_back("the worker Python does not run (" + r.python.error +
                        "): intake, profiling and validation need it; set it in the settings or run "
                        "packaging/setup-deps.sh.");
    else if (!r.python.torch_ok)
      r.notes.push_back("the worker Python cannot import torch (" + r.python.torch_error +
                        "): install the pinned packages with packaging/setup-deps.sh.");
    else if (r.has_gpu() && !r.python.cuda_available)
      r.notes.push_back("the worker's torch " + r.python.torch_version +
                        " does not see the GPU: it may be a CPU-only build.");
  }
  if (!r.libtorch_linked)
    r.notes.push_back("LibTorch is not loaded in-process (" + r.libtorch_version +
                      "): a build configured with torch's cmake prefix path has the probe; the .deb does not ship "
                      "it. The workers use their Python's torch (above) either way.");
  return r;
}

void DoctorReport::note_settings(const std::string& path, const std::string& error) {
  settings_path = path;
  settings_error = error;
  if (!error.empty()) notes.push_back(error + ": the defaults were used instead; fix or remove the file.");
}

std::string DoctorReport::to_text() const {
  std::ostringstream o;
  o << fmt::format("Nova Studio {}\n", nova_version);
  o << fmt::format("  OS          {} ({})\n", os, kernel);
  o << fmt::format("  CPU         {}, {} cores, {} RAM\n", cpu, cpu_cores, gib(memory_bytes));
  if (driver_loaded && driver_version)
    o << fmt::format("  Driver      CUDA {} (driver API)\n", version_string(driver_version));
  else
    o << fmt::format("  Driver      {}\n", driver_error);
  if (gpus.empty()) o << "  GPUs        none\n";
  for (const auto& g : gpus) {
    o << fmt::format("  GPU {}       {} ({}, compute capability {}.{}), {} SMs, {} memory, {} MB L2,\n",
                     g.index, g.name, g.arch(), g.cc_major, g.cc_minor, g.sm_count, gib(g.memory_bytes),
                     g.l2_bytes / (1 << 20));
    o << fmt::format("              SM clock up to {} MHz, memory clock {} MHz, {}-bit bus, PCI {}\n",
                     g.sm_clock_khz / 1000, g.memory_clock_khz / 1000, g.memory_bus_bits, g.pci_bus_id);
  }
  o << fmt::format("  CUDA        runtime {} (built with), toolkit {} (nvcc {})\n",
                   version_string(runtime_version), cuda_toolkit,
                   nvcc_version.empty() ? "missing" : nvcc_version);
  std::string archs;
  for (int a : nvrtc_archs) archs += fmt::format("{}sm_{}", archs.empty() ? "" : " ", a);
  o << fmt::format("  NVRTC       {}.{}, architectures: {}\n", nvrtc_major, nvrtc_minor, archs);
  o << fmt::format("  CUPTI       API version {}\n", cupti_version);
  if (!settings_path.empty())
    o << fmt::format("  Settings    {}{}\n", settings_path,
                     settings_error.empty() ? "" : " (broken: defaults used)");
  if (libtorch_linked)
    o << fmt::format("  LibTorch    {} (plugin loaded), CUDA {}, {} device(s)\n", libtorch_version,
                     libtorch_cuda ? "available" : "not available", libtorch_devices);
  else
    o << "  LibTorch    not available\n";
  if (!python.interpreter.empty()) {
    if (python.ran) {
      o << fmt::format("  Python      {} ({})\n", python.version, python.executable);
      if (python.torch_ok) {
        std::string devs;
        for (const auto& d : python.cuda_devices) devs += (devs.empty() ? "" : ", ") + d;
        o << fmt::format("  torch       {} (CUDA {}), GPU {}\n", python.torch_version,
                         python.torch_cuda.empty() ? "none" : python.torch_cuda,
                         python.cuda_available ? "available: " + devs : "not available");
        if (!python.torch_bytecode.empty()) o << fmt::format("  bytecode    torch's: {}\n", python.torch_bytecode);
      } else {
        o << fmt::format("  torch       cannot be imported: {}\n", python.torch_error);
      }
      if (python.report_missing) {
        const auto& m = *python.report_missing;
        const bool no_pdf_only = m.size() == 1 && m.front() == "weasyprint";
        o << fmt::format("  report      {}\n",
                         m.empty()      ? "jsonschema, jinja2, matplotlib and weasyprint: HTML and PDF"
                         : no_pdf_only ? "HTML only: weasyprint is missing (the PDF; packaging/requirements.txt)"
                                       : fmt::format("nova report cannot run here: missing {} (packaging/requirements.txt)",
                                                     fmt::join(m, ", ")));
      }
    } else {
      o << fmt::format("  Python      {}: {}\n", python.interpreter, python.error);
    }
  }
  if (!notes.empty()) {
    o << "\n";
    for (const auto& n : notes) o << "  - " << n << "\n";
  }
  return o.str();
}

void to_json(nlohmann::json& j, const GpuInfo& g) {
  j = {{"index", g.index},
       {"name", g.name},
       {"arch", g.arch()},
       {"compute_capability", {g.cc_major, g.cc_minor}},
       {"sm_count", g.sm_count},
       {"memory_bytes", g.memory_bytes},
       {"l2_bytes", g.l2_bytes},
       {"sm_clock_khz", g.sm_clock_khz},
       {"memory_clock_khz", g.memory_clock_khz},
       {"memory_bus_bits", g.memory_bus_bits},
       {"pci_bus_id", g.pci_bus_id}};
}

void to_json(nlohmann::json& j, const PythonInfo& p) {
  j = {{"interpreter", p.interpreter},
       {"ran", p.ran},
       {"error", p.error},
       {"executable", p.executable},
       {"version", p.version},
       {"torch_ok", p.torch_ok},
       {"torch_version", p.torch_version},
       {"torch_cuda", p.torch_cuda},
       {"torch_error", p.torch_error},
       {"torch_bytecode", p.torch_bytecode},
       {"report_missing", p.report_missing ? nlohmann::json(*p.report_missing) : nlohmann::json(nullptr)},
       {"cuda_available", p.cuda_available},
       {"cuda_devices", p.cuda_devices}};
}

void to_json(nlohmann::json& j, const DoctorReport& r) {
  j = {{"nova_version", r.nova_version},
       {"os", r.os},
       {"kernel", r.kernel},
       {"cpu", r.cpu},
       {"cpu_cores", r.cpu_cores},
       {"memory_bytes", r.memory_bytes},
       {"driver", {{"loaded", r.driver_loaded}, {"version", r.driver_version}, {"error", r.driver_error}}},
       {"gpus", r.gpus},
       {"cuda",
        {{"runtime_version", r.runtime_version},
         {"toolkit", r.cuda_toolkit},
         {"nvcc_version", r.nvcc_version}}},
       {"nvrtc", {{"version", fmt::format("{}.{}", r.nvrtc_major, r.nvrtc_minor)}, {"archs", r.nvrtc_archs}}},
       {"cupti", {{"api_version", r.cupti_version}}},
       {"libtorch",
        {{"linked", r.libtorch_linked},
         {"version", r.libtorch_version},
         {"cuda_available", r.libtorch_cuda},
         {"devices", r.libtorch_devices}}},
       {"python", r.python},
       {"settings", {{"path", r.settings_path}, {"error", r.settings_error}}},
       {"notes", r.notes}};
}

}  // namespace nova
