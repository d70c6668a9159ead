// `nova export MODEL.py [--project DIR] --out DIR [--name NAME] [--arch LIST] [--check-build]`: the
// delivery step. From the model's project, the version each group ships (the user's choice for export,
// else the selection policy's), written as a pip-installable package (core/export): ops registered
// with TORCH_LIBRARY, ModelNew and optimize(), its own tests and benchmark, a README with the stored
// figures. Needs no GPU; --check-build compiles the package's sources with nvcc before it is moved
// into place. Bad input (a changed model file, an unvalidated or declined choice, a non-empty --out,
// a Model that cannot be rebuilt from get_init_inputs(), no nvcc, a failed build) exits 2 and leaves
// nothing behind.
#include <iostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "core/cli/cli_app.h"
#include "core/cli/cli_error.h"
#include "core/cli/session_cli.h"
#include "core/env/resource_paths.h"
#include "core/env/settings.h"
#include "core/export/export_error.h"
#include "core/export/export_planner.h"
#include "core/export/model_rebuild_check.h"
#include "core/export/package_build_check.h"
#include "core/export/package_writer.h"

namespace nova {
namespace {

struct ExportFlags {
  SessionCli session;
  std::string out, name, arch = ExportOptions{}.arch_list, check_arch = "90";
  bool check_build = false;
};

std::string command_line(const ExportFlags& f) {
  std::string c = fmt::format("nova export {} --out {}", f.session.model(), f.out);
  if (!f.session.project().empty()) c += " --project " + f.session.project();
  if (!f.name.empty()) c += " --name " + f.name;
  if (f.arch != ExportOptions{}.arch_list) c += " --arch \"" + f.arch + "\"";
  return c;
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "export", "write the project's shipped kernels as a pip-installable drop-in package (no GPU needed)");
  auto f = std::make_shared<ExportFlags>();
  f->session.add_options(*cmd, "the model file the project belongs to");
  cmd->add_option("--out", f->out, "the package folder to create (must not exist, or be empty)")->required();
  cmd->add_option("--name", f->name, "the Python package and op namespace (default: nova_<model file stem>)");
  cmd->add_option("--arch", f->arch, "TORCH_CUDA_ARCH_LIST the package builds for")->capture_default_str();
  cmd->add_flag("--check-build", f->check_build,
                "compile the package's sources with nvcc (object files only) before moving it into place");
  cmd->add_option("--check-arch", f->check_arch, "the architecture --check-build compiles for")
      ->capture_default_str();
  cmd->callback([f] {
    SessionOptions options;
    options.gpus = 1;
    options.cpu_threads = 1;
    auto session = f->session.open(options);
    auto say = [](const std::string& m) { std::cerr << "  " << m << "\n"; };
    try {
      ExportOptions eo;
      eo.package_name = f->name;
      eo.arch_list = f->arch;
      say(fmt::format("checking that {} rebuilds its Model from get_init_inputs()", f->session.model()));
      ModelRebuildCheck::check(session->options().python, f->session.model());
      say("reading the project's versions and results");
      ExportPlan plan = ExportPlanner::plan(session->store(), session->model_unchanged(), eo);
      std::function<void(const std::filesystem::path&)> check;
      if (f->check_build && plan.shipped() > 0) {
        const auto nvcc = PackageBuildCheck::nvcc(Settings::load().resolved_cuda_toolkit());
        const auto includes = PackageBuildCheck::include_dirs(session->options().python);
        check = [=](const std::filesystem::path& dir) { PackageBuildCheck::compile(dir, nvcc, includes, f->check_arch, say); };
      }
      PackageWriter::write(plan, f->out, command_line(*f), say, check);
      for (const auto& g : plan.groups)
        if (g.ships())
          session->store().add_export({0, *g.version_id, std::filesystem::absolute(f->out).string(), ""});
      std::cout << fmt::format("wrote {} ({}): {} of {} fusion groups ship kernels\n", f->out, plan.package_name,
                               plan.shipped(), plan.groups.size());
      for (const auto& g : plan.groups)
        std::cout << fmt::format("  group {} ({}): {}{}\n", g.group_id, g.kind,
                                 g.ships() ? fmt::format("version {} ships; ", *g.version_id) : "PyTorch; ", g.reason);
      std::cout << fmt::format("install: pip install --no-build-isolation {}\n", f->out);
    } catch (const ExportError& e) {
      throw CliError(e.what(), 2);
    } catch (const ModelRebuildCheck::CannotRun& e) {
      throw CliError(e.what(), 3);
    }
  });
}

}  // namespace nova
