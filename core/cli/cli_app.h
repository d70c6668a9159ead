#pragma once
// The `nova` command line: one subcommand per file in core/cli/ (doctor_command.cpp, ...),
// each registered by an add_*_command function called from run_cli().
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace nova {

int run_cli(int argc, char** argv);

// Registration functions, one per subcommand file.
void add_doctor_command(CLI::App& app);
void add_generate_command(CLI::App& app);
void add_intake_command(CLI::App& app);
void add_validate_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_profile_command(CLI::App& app);
void add_optimize_command(CLI::App& app);
void add_status_command(CLI::App& app);
void add_llm_command(CLI::App& app);
void add_export_command(CLI::App& app);
void add_check_package_command(CLI::App& app);
void add_report_command(CLI::App& app);

}  // namespace nova
