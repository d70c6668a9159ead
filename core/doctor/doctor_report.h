#pragma once
// The environment report behind `nova doctor` and the studio's About box: OS, CPU, GPUs (read
// through the CUDA driver API), driver/runtime/NVRTC/CUPTI versions, LibTorch, and the Python the
// workers will use. Plain data with a JSON form; collect_doctor_report() fills it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nova {

struct GpuInfo {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::uint64_t memory_bytes = 0;
  int l2_bytes = 0;
  int sm_clock_khz = 0;  // maximum SM clock the driver reports
  int memory_clock_khz = 0;
  int memory_bus_bits = 0;
  std::string pci_bus_id;
  std::string arch() const { return "sm_" + std::to_string(cc_major * 10 + cc_minor); }
};

struct PythonInfo {
  std::string interpreter;  // as configured
  bool ran = false;         // the interpreter started and answered
  std::string error;        // why not, in a sentence
  std::string executable, version;
  bool torch_ok = false;
  std::string torch_version, torch_cuda, torch_error;
  // Where the workers' torch bytecode comes from, in words: its own, nova's cache, or none (then every
  // worker compiles torch's Python again at start: 17-18 s on the GPU box).
  std::string torch_bytecode;
  // The Python packages of `nova report` this interpreter cannot import (jsonschema, jinja2, matplotlib;
  // weasyprint: the PDF); empty where all are there, none where the interpreter did not say.
  std::optional<std::vector<std::string>> report_missing;
  bool cuda_available = false;
  std::vector<std::string> cuda_devices;
};

struct DoctorReport {
  std::string nova_version;
  std::string os, kernel, cpu;
  int cpu_cores = 0;
  std::uint64_t memory_bytes = 0;

  bool driver_loaded = false;  // libcuda.so.1 found
  std::string driver_error;    // e.g. "libcuda.so.1 not found" or a cuInit error
  int driver_version = 0;      // e.g. 13000
  std::vector<GpuInfo> gpus;

  int runtime_version = 0;   // cudart nova was built with
  std::string cuda_toolkit;  // path used for nvcc builds
  std::string nvcc_version;  // empty if nvcc is missing
  int nvrtc_major = 0, nvrtc_minor = 0;
  std::vector<int> nvrtc_archs;  // e.g. 75, 80, ..., 90, 100, 120
  int cupti_version = 0;         // CUPTI API version

  bool libtorch_linked = false;
  std::string libtorch_version;
  bool libtorch_cuda = false;
  int libtorch_devices = 0;

  PythonInfo python;

  std::string settings_path;   // the settings file read
  std::string settings_error;  // why it could not be used (then the defaults were); empty if it could

  // Plain sentences about missing pieces and what they mean for the user.
  std::vector<std::string> notes;

  bool has_gpu() const { return !gpus.empty(); }
  // Records the settings file read and, if it could not be used (`error`), a note saying so.
  void note_settings(const std::string& path, const std::string& error);
  std::string to_text() const;
};

void to_json(nlohmann::json& j, const GpuInfo& g);
void to_json(nlohmann::json& j, const PythonInfo& p);
void to_json(nlohmann::json& j, const DoctorReport& r);

struct DoctorOptions {
  std::string python;        // interpreter to probe
  std::string cuda_toolkit;  // toolkit folder (for nvcc)
  bool probe_python = true;
};

DoctorReport collect_doctor_report(const DoctorOptions& options);

// Pieces of the report, each usable on its own (the worker pool and builders reuse them).
void probe_cuda_driver(DoctorReport& report);
void probe_libtorch(DoctorReport& report);
// The architectures NVRTC compiles for here (e.g. 75, 80, ..., 90, 100, 120).
std::vector<int> nvrtc_supported_archs();
PythonInfo probe_python(const std::string& interpreter);

}  // namespace nova
