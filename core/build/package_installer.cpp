#include "core/build/package_installer.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/env/fnv1a.h"
#include <stdexcept>
#include "core/worker/child_process.h"

namespace nova {
namespace fs = std::filesystem;
namespace {

bool build_output(const fs::path& relative) {
  for (const auto& part : relative) {
    const std::string p = part.string();
    if (p == "build" || p == "dist" || p == "__pycache__" || p.ends_with(".egg-info")) return true;
  }
  const std::string ext = relative.extension().string();
  return ext == ".so" || ext == ".o" || ext == ".pyc";
}

std::string last_lines(const std::string& text, std::size_t n) {
  std::size_t pos = text.size();
  for (std::size_t i = 0; i < n && pos > 0; ++i) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string::npos) return text;
  }
  return text.substr(pos + 1);
}

}  // namespace

std::string PackageInstaller::content_hash(const fs::path& package) {
  if (!fs::is_regular_file(package / "setup.py") && !fs::is_regular_file(package / "pyproject.toml"))
    throw std::runtime_error(fmt::format("{} is not a package folder (no setup.py or pyproject.toml): give the folder "
                                  "`nova export --out` wrote",
                                  package.string()));
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(package)) {
    if (!e.is_regular_file()) continue;
    fs::path rel = fs::relative(e.path(), package);
    if (!build_output(rel)) files.push_back(rel);
  }
  std::sort(files.begin(), files.end());
  std::string all;
  for (const auto& rel : files) {
    std::ifstream in(package / rel, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    all += rel.generic_string() + '\0' + text.str() + '\0';
  }
  return fmt::format("{:016x}", fnv1a64(all));
}

fs::path PackageInstaller::install(const fs::path& package_arg, const fs::path& cache, const std::string& python,
                                   const Progress& progress, const Cancelled& cancelled) {
  const fs::path package = fs::absolute(package_arg).lexically_normal();
  const std::string hash = content_hash(package);
  const fs::path home = cache / hash;
  const fs::path site = home / "site";
  if (fs::exists(home / "installed")) {
    if (progress) progress(fmt::format("the package is already built ({})", site.string()));
    return site;
  }
  std::error_code ec;
  fs::remove_all(home, ec);  // a build that did not finish
  fs::create_directories(home, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot create {}: {}", home.string(), ec.message()));
  auto fail = [&](const std::string& message) {
    fs::remove_all(home, ec);
    throw std::runtime_error(message);
  };
  if (progress) progress("building the package with pip (nvcc compiles its kernels; minutes)");
  ChildProcess child;
  try {
    child.start({python, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index",
                 "--no-compile", "--disable-pip-version-check", "--target", site.string(), package.string()},
                ChildProcess::minimal_env(), package.string());
  } catch (const std::exception& e) {
    fail(fmt::format("cannot start {}: {}", python, e.what()));
  }
  child.close_stdin();
  std::string out;
  for (;;) {
    if (cancelled && cancelled()) {
      child.terminate();
      fail("cancelled while building the package");
    }
    while (auto line = child.read_line(std::chrono::milliseconds(200))) {
      out += *line + "\n";
      if (progress && line->find("Building") != std::string::npos) progress(*line);
    }
    if (child.eof()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (auto status = child.wait(std::chrono::milliseconds(0))) {
      while (auto line = child.read_line(std::chrono::milliseconds(0))) out += *line + "\n";
      if (!status->exited || status->code != 0)
        fail(fmt::format("pip could not build the package in {} ({}):\n{}", package.string(), status->describe(),
                         last_lines(out + child.stderr_text(), 30)));
      break;
    }
  }
  std::ofstream(home / "installed") << package.string() << "\n";
  return site;
}

}  // namespace nova
