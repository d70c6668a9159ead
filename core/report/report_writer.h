#pragma once
// Writes the client report of a session's project as a job (CPU lane, with progress and cancel): the
// data from ReportBuilder as report.json, then report.html and report.pdf rendered by a worker
// (`render_report`: Jinja2, matplotlib SVG charts, WeasyPrint), all into a private temporary folder
// beside the output folder that is renamed into place at the end, so a failure or a cancel leaves
// nothing. Where the worker cannot make a PDF (WeasyPrint missing) the job's result says why and the
// other forms are written. Used by `nova report` and the studio's Report action.
#include <filesystem>
#include <string>
#include <vector>


namespace nova {

class ProjectSession;

class ReportWriter {
 public:
  struct Options {
    std::filesystem::path out;                           // must not exist, or be an empty folder
    std::vector<std::string> formats{"html", "pdf", "json"};
    std::string model_path;                              // as the user named it (shown in the report)
  };

  // "html,pdf" -> {"html", "pdf"}; throws ReportError naming an unknown form.
  static std::vector<std::string> parse_formats(const std::string& list);
  // Throws ReportError when `out` exists and is not an empty folder.
  static void check_out(const std::filesystem::path& out);

  // Reads the report's data (ReportBuilder) on the calling thread, then queues the job that writes it;
  // the job's result: {"out", "files": [...], "pdf_error", "problems": [...]}. Throws ReportError, queuing
  // nothing, for a project that cannot be reported (no graph, nothing validated) or a non-empty `out`.
  static int submit(ProjectSession& session, Options options);
};

}  // namespace nova
