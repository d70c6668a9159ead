// `nova doctor [--json] [--no-python]`: the environment report. A settings file that cannot be used
// is one of its findings (the defaults stand in), never a reason not to report.
#include <iostream>

#include <CLI/CLI.hpp>

#include "core/cli/cli_app.h"
#include "core/doctor/doctor_report.h"
#include "core/env/settings.h"

namespace nova {

void add_doctor_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("doctor", "report the GPU, CUDA, NVRTC, CUPTI, LibTorch and Python found");
  struct Opts {
    bool json = false;
    bool no_python = false;
    std::string python;
  };
  auto opts = std::make_shared<Opts>();
  cmd->add_flag("--json", opts->json, "print the report as JSON");
  cmd->add_flag("--no-python", opts->no_python, "skip the worker interpreter probe");
  cmd->add_option("--python", opts->python, "interpreter to probe (default: from the settings)");
  cmd->callback([opts] {
    DoctorOptions o;
    Settings settings;
    std::string settings_error;
    try {
      settings = Settings::load();
    } catch (const std::exception& e) {
      settings_error = e.what();
    }
    o.python = opts->python.empty() ? settings.resolved_python() : opts->python;
    o.cuda_toolkit = settings.resolved_cuda_toolkit();
    o.probe_python = !opts->no_python;
    DoctorReport r = collect_doctor_report(o);
    r.note_settings(Settings::default_path().string(), settings_error);
    if (opts->json)
      std::cout << nlohmann::json(r).dump(2) << "\n";
    else
      std::cout << r.to_text();
  });
}

}  // namespace nova
