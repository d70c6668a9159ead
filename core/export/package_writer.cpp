#include "core/export/package_writer.h"

#include <fstream>
#include <sstream>
#include <system_error>

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fmt/format.h>

#include "core/env/resource_paths.h"
#include "core/export/export_error.h"
#include "core/export/package_manifest.h"
#include "core/export/package_readme.h"
#include "core/export/package_sources.h"

namespace nova {
namespace fs = std::filesystem;
namespace {

// The templates that land in the package: resources/export/<from> -> <to>, "@PACKAGE@" filled in.
struct Template {
  const char* from;
  const char* to;
};
constexpr Template kTemplates[] = {
    {"package/__init__.py", "@PACKAGE@/__init__.py"}, {"package/_ops.py", "@PACKAGE@/_ops.py"},
    {"package/_runtime.py", "@PACKAGE@/_runtime.py"}, {"package/_stats.py", "@PACKAGE@/_stats.py"},
    {"benchmark.py", "benchmark.py"},                 {"tests/conftest.py", "tests/conftest.py"},
    {"tests/test_ops.py", "tests/test_ops.py"},       {"tests/test_model.py", "tests/test_model.py"},
    {"installed_first.py", "installed_first.py"},
};

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t p = text.find(from); p != std::string::npos; p = text.find(from, p + to.size()))
    text.replace(p, from.size(), to);
  return text;
}

std::string read_template(const std::string& name) {
  std::ifstream in(PackageWriter::templates_dir() / name);
  if (!in) throw ExportError("resources/export/" + name + " is missing: the nova installation is incomplete");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Removes a temporary folder unless released (the package moved into place).
struct TempFolder {
  fs::path path;
  ~TempFolder() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

}  // namespace

fs::path PackageWriter::templates_dir() { return resources_dir() / "export"; }

std::map<std::string, std::string> PackageWriter::files(const ExportPlan& plan, const std::string& command) {
  const std::string& pkg = plan.package_name;
  std::map<std::string, std::string> out;
  out["pyproject.toml"] = PackageSources::pyproject_toml(plan);
  out["setup.py"] = PackageSources::setup_py(plan);
  out["README.md"] = PackageReadme::write(plan, command);
  out[pkg + "/package.json"] = PackageManifest::build(plan).dump(2) + "\n";
  out[pkg + "/client_model.py"] = plan.model_source;
  if (plan.shipped() > 0) out["csrc/ops.cpp"] = PackageSources::registration(plan);
  for (std::size_t i = 0; i < plan.groups.size(); ++i) {
    const ExportGroup& g = plan.groups[i];
    if (!g.ships()) continue;
    const std::string op = PackageSources::op_name(g.group_id);
    out["csrc/" + op + ".cu"] = PackageSources::group_source(plan, g);
    out[pkg + "/groups/" + op + ".py"] = plan.graph.groups.at(i).functional_source;
  }
  for (const auto& t : kTemplates) out[replace_all(t.to, "@PACKAGE@", pkg)] = replace_all(read_template(t.from), "@PACKAGE@", pkg);
  return out;
}

void PackageWriter::write(const ExportPlan& plan, const fs::path& out_arg, const std::string& command,
                          const Progress& progress, const std::function<void(const fs::path&)>& check) {
  auto say = [&](const std::string& m) {
    if (progress) progress(m);
  };
  const fs::path out = fs::absolute(out_arg).lexically_normal();
  std::error_code ec;
  if (fs::exists(fs::symlink_status(out, ec))) {
    if (!fs::is_directory(fs::symlink_status(out, ec)))
      throw ExportError(fmt::format("--out {} exists and is not a folder: choose another output folder", out.string()));
    if (!fs::is_empty(out, ec))
      throw ExportError(fmt::format("--out {} is not empty: choose another output folder or empty it first",
                                    out.string()));
  }
  // The folders above --out are made as needed (like mkdir -p), and taken away again if the export
  // fails, so a failed export leaves nothing behind.
  const fs::path parent = out.parent_path();
  TempFolder made_parents;
  if (!fs::is_directory(parent, ec)) {
    fs::path first_missing = parent;
    while (!first_missing.parent_path().empty() && first_missing.parent_path() != first_missing &&
           !fs::exists(first_missing.parent_path(), ec))
      first_missing = first_missing.parent_path();
    fs::create_directories(parent, ec);
    if (ec || !fs::is_directory(parent))
      throw ExportError(fmt::format("cannot create the folder {} (where --out goes): {}", parent.string(),
                                    ec ? ec.message() : "a file of that name is in the way"));
    made_parents.path = first_missing;
  }

  say("writing the package's sources");
  const auto contents = files(plan, command);

  std::string pattern = (parent / ("." + out.filename().string() + ".nova-export-XXXXXX")).string();
  if (!mkdtemp(pattern.data()))
    throw ExportError(fmt::format("cannot create a temporary folder in {}: {}", parent.string(),
                                  std::error_code(errno, std::generic_category()).message()));
  TempFolder temp{pattern};
  for (const auto& [name, text] : contents) {
    const fs::path file = temp.path / name;
    fs::create_directories(file.parent_path(), ec);
    std::ofstream f(file, std::ios::binary);
    f << text;
    f.close();
    if (!f) throw ExportError(fmt::format("cannot write {} in {}", name, temp.path.string()));
  }
  if (check) check(temp.path);
  // The client's code: readable by the user only, like the project (mkdtemp made the folder 0700).
  say("moving the package into place");
  if (fs::exists(out, ec)) fs::remove(out, ec);  // an empty folder, checked above
  fs::rename(temp.path, out, ec);
  if (ec)
    throw ExportError(fmt::format("cannot move the package into {}: {}", out.string(), ec.message()));
  temp.path.clear();
  made_parents.path.clear();
}

}  // namespace nova
