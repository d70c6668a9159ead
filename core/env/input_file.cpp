#include "core/env/input_file.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

namespace nova {
namespace fs = std::filesystem;

void InputFile::require_file(const fs::path& path, const std::string& what) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (!fs::exists(status)) throw std::invalid_argument(fmt::format("{} file not found: {}", what, path.string()));
  if (fs::is_directory(status))
    throw std::invalid_argument(fmt::format("{} {} is a directory, not a file", what, path.string()));
  if (!fs::is_regular_file(status))
    throw std::invalid_argument(fmt::format("{} {} is not a regular file", what, path.string()));
  if (!std::ifstream(path))
    throw std::invalid_argument(fmt::format("{} {} cannot be read", what, path.string()));
}

void InputFile::require_python_model(const fs::path& path) {
  require_file(path, "model");
  if (path.extension() != ".py")
    throw std::invalid_argument(fmt::format(
        "model {} is not a Python file: give the model's .py source (a KernelBench Model with get_inputs "
        "and get_init_inputs, or the functional module_fn form)",
        path.string()));
  std::ifstream in(path, std::ios::binary);
  char buffer[4096];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0)
    if (std::string_view(buffer, static_cast<std::size_t>(in.gcount())).find('\0') != std::string_view::npos)
      throw std::invalid_argument(
          fmt::format("model {} is not Python source: it holds binary data (NUL bytes)", path.string()));
}

nlohmann::json InputFile::read_json(const fs::path& path, const std::string& what) {
  require_file(path, what);
  std::ifstream in(path);
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(
        fmt::format("{} {} is not valid JSON: {}", what, path.string(), short_reason(e)));
  }
}

std::string InputFile::short_reason(const std::exception& e, std::size_t limit) {
  std::string text = e.what();
  if (text.rfind("[json.exception.", 0) == 0)
    if (auto close = text.find("] "); close != std::string::npos) text.erase(0, close + 2);
  // The parser's "; last read: '...'" quotes the input up to the error: keep only its tail.
  if (auto last = text.find("; last read: '"); last != std::string::npos) {
    std::string read = text.substr(last + 14);
    if (!read.empty() && read.back() == '\'') read.pop_back();
    if (read.size() > 24) read = "..." + read.substr(read.size() - 24);
    text = text.substr(0, last) + "; last read: '" + read + "'";
  }
  std::string out;
  for (char c : text) out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  if (out.size() > limit) out = out.substr(0, limit - 3) + "...";
  return out;
}

}  // namespace nova
