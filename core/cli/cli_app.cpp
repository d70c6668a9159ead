#include "core/cli/cli_app.h"
#include "core/env/build_info.h"
#include "core/env/private_files.h"

#include <iostream>

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "core/cli/cli_error.h"

namespace nova {

int run_cli(int argc, char** argv) {
  make_new_files_private();  // projects, graphs, inputs and candidates hold the client's code
  CLI::App app{"nova: the headless Nova Studio (intake, profiling, generation, validation, benchmarks, the whole workflow)"};
  app.set_version_flag("--version", std::string("nova ") + build_info::version());
  app.require_subcommand(1);
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "log debug messages to stderr");
  app.parse_complete_callback(
      [&] { spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::warn); });

  add_doctor_command(app);
  add_intake_command(app);
  add_generate_command(app);
  add_validate_command(app);
  add_bench_command(app);
  add_profile_command(app);
  add_optimize_command(app);
  add_status_command(app);
  add_llm_command(app);
  add_export_command(app);
  add_check_package_command(app);
  add_report_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints the message (or the help, or the version: code 0)
    return code == 0 ? 0 : 2;       // bad usage is bad input: exit 2, as every other input error
  } catch (const CliError& e) {
    std::cerr << "nova: " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "nova: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace nova
