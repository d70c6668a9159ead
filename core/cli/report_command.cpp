// `nova report MODEL.py [--project DIR] --out DIR [--format html,pdf,json]`: the client report of the
// model's project (ReportBuilder, ReportWriter): report.json, and report.html and report.pdf rendered by
// a worker, moved into --out at the end. Reads only; needs no GPU. Exit 2 for a project that cannot be
// reported (no graph, no validated version), an unknown form or a non-empty --out; 1 when rendering fails.
#include <iostream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "core/cli/cli_app.h"
#include "core/cli/cli_error.h"
#include "core/cli/job_progress_printer.h"
#include "core/cli/session_cli.h"
#include "core/report/report_error.h"
#include "core/report/report_writer.h"

namespace nova {

void add_report_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "report", "the client report of a project: HTML, PDF and JSON, every figure with its stored result (no GPU needed)");
  struct Flags {
    SessionCli session;
    std::string out, formats = "html,pdf,json";
  };
  auto f = std::make_shared<Flags>();
  f->session.add_options(*cmd, "the model file the project belongs to");
  cmd->add_option("--out", f->out, "the folder to write the report into (must not exist, or be empty)")->required();
  cmd->add_option("--format", f->formats, "the forms to write, comma-separated: html, pdf, json")->capture_default_str();
  cmd->callback([f] {
    ReportWriter::Options options;
    options.out = f->out;
    options.model_path = f->session.model();
    try {
      options.formats = ReportWriter::parse_formats(f->formats);
      ReportWriter::check_out(options.out);
    } catch (const ReportError& e) {
      throw CliError(e.what(), 2);
    }
    SessionOptions session_options;
    session_options.gpus = 1;
    session_options.cpu_threads = 1;
    auto session = f->session.open(session_options);
    session->set_listener(job_progress_printer());
    int job = 0;
    try {
      job = ReportWriter::submit(*session, options);
    } catch (const ReportError& e) {
      throw CliError(e.what(), 2);
    }
    const JobInfo info = session->wait(job);
    if (info.state != JobState::Succeeded)
      throw CliError(fmt::format("the report was not written ({}): {}", to_string(info.state), info.error), 1);
    for (const auto& p : info.result["problems"]) std::cout << "lacks: " << p.get<std::string>() << "\n";
    const std::string pdf_error = info.result.value("pdf_error", std::string());
    if (!pdf_error.empty()) std::cout << "no PDF: " << pdf_error << "\n";
    std::cout << fmt::format("report written to {}:\n", info.result["out"].get<std::string>());
    for (const auto& file : info.result["files"]) std::cout << "  " << file.get<std::string>() << "\n";
  });
}

}  // namespace nova
