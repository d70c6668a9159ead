#include "core/report/report_writer.h"

#include <cerrno>
#include <cstdio>
#include <algorithm>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/env/build_info.h"
#include "core/env/resource_paths.h"
#include "core/jobs/job_context.h"
#include "core/jobs/job_worker_call.h"
#include "core/report/report_builder.h"
#include "core/report/report_error.h"
#include "core/session/project_session.h"

namespace nova {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The first line `command` prints, or empty when it fails.
std::string first_line_of(const std::string& command) {
  std::FILE* p = popen(command.c_str(), "r");
  if (!p) return {};
  char buf[256] = {};
  std::string line = std::fgets(buf, sizeof buf, p) ? buf : "";
  if (pclose(p) != 0) return {};
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  return line;
}

// The commit of the source tree this build came from ("<hash>", "<hash> with local changes"), or
// empty where it is not a git checkout (the report says "not recorded").
std::string source_commit() {
  const std::string dir = build_info::source_dir();
  if (dir.find('\'') != std::string::npos) return {};
  const std::string git = "git -C '" + dir + "' ";
  const std::string hash = first_line_of(git + "rev-parse HEAD 2>/dev/null");
  if (hash.empty()) return {};
  const bool dirty = !first_line_of(git + "status --porcelain --untracked-files=no 2>/dev/null").empty();
  return dirty ? hash + " with local changes" : hash;
}

// Removes a temporary folder unless it was moved into place.
struct PendingFolder {
  fs::path path;
  ~PendingFolder() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

}  // namespace

std::vector<std::string> ReportWriter::parse_formats(const std::string& list) {
  static const std::set<std::string> known = {"html", "pdf", "json"};
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item.empty()) continue;
    if (!known.count(item))
      throw ReportError(fmt::format("unknown report form '{}': --format takes html, pdf and json, comma-separated", item));
    if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
  }
  if (out.empty()) throw ReportError("--format names no form: give html, pdf or json (comma-separated)");
  return out;
}

void ReportWriter::check_out(const fs::path& out) {
  std::error_code ec;
  if (!fs::exists(out, ec)) return;
  if (!fs::is_directory(out, ec))
    throw ReportError(fmt::format("--out {} exists and is not a folder: choose another output folder", out.string()));
  if (!fs::is_empty(out, ec))
    throw ReportError(fmt::format("--out {} is not empty: choose another output folder or empty it first", out.string()));
}

int ReportWriter::submit(ProjectSession& session, Options options) {
  check_out(options.out);
  if (options.formats.empty()) throw ReportError("no report form asked for: give html, pdf or json");
  JobSpec spec;
  spec.key = "report:" + options.out.string();
  spec.title = "report on " + fs::path(options.model_path).filename().string();
  spec.lane = JobLane::Cpu;
  // The data is made here, on the owner's thread (a project that cannot be reported is refused before
  // anything is queued); the job renders and writes it.
  ReportBuilder::Context context{options.model_path, session.model_unchanged(), build_info::version(),
                                 source_commit(), utc_now()};
  const ReportData data = ReportBuilder::build(session.store(), context);
  spec.work = [&session, options, j = json(data), problems = data.problems](JobContext& ctx) -> json {
    check_out(options.out);
    const fs::path out = fs::absolute(options.out);
    std::error_code ec;
    fs::create_directories(out.parent_path(), ec);
    std::string pattern = (out.parent_path() / ("." + out.filename().string() + ".nova-report-XXXXXX")).string();
    if (!mkdtemp(pattern.data()))
      throw ReportError(fmt::format("cannot create a temporary folder in {}: {}", out.parent_path().string(),
                                    std::error_code(errno, std::generic_category()).message()));
    PendingFolder temp{pattern};
    json files = json::array();
    const auto wants = [&](const char* form) {
      return std::find(options.formats.begin(), options.formats.end(), form) != options.formats.end();
    };
    if (wants("json")) {
      std::ofstream f(temp.path / "report.json");
      f << j.dump(1) << "\n";
      f.close();
      if (!f) throw ReportError(fmt::format("cannot write report.json in {}", temp.path.string()));
      files.push_back((out / "report.json").string());
    }
    std::string pdf_error;
    std::vector<std::string> render;
    for (const char* form : {"html", "pdf"})
      if (wants(form)) render.push_back(form);
    if (!render.empty()) {
      ctx.progress("rendering " + fmt::format("{}", fmt::join(render, " and ")) + " in a worker", 0.2);
      json answer = session.runner().run("render_report",
                                         {{"data", j},
                                          {"out", temp.path.string()},
                                          {"formats", render},
                                          {"resources", (resources_dir() / "report").string()}},
                                         worker_call_for(ctx, "rendering the report"));
      for (const auto& f : answer.value("files", json::array()))
        files.push_back((out / fs::path(f.get<std::string>()).filename()).string());
      pdf_error = answer.value("pdf_error", std::string());
      if (!pdf_error.empty()) ctx.log("no PDF: " + pdf_error);
    }
    ctx.token().throw_if_cancelled();
    ctx.progress("moving the report into place", 0.95);
    if (fs::exists(out, ec)) fs::remove(out, ec);  // an empty folder, checked above
    fs::rename(temp.path, out, ec);
    if (ec) throw ReportError(fmt::format("cannot move the report into {}: {}", out.string(), ec.message()));
    temp.path.clear();
    return {{"out", out.string()}, {"files", files}, {"pdf_error", pdf_error}, {"problems", problems}};
  };
  return session.jobs().submit(std::move(spec));
}

}  // namespace nova
