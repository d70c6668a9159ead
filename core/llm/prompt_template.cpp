#include "core/llm/prompt_template.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "core/env/resource_paths.h"

namespace nova {

std::filesystem::path PromptTemplate::folder() { return resources_dir() / "prompts"; }

PromptTemplate PromptTemplate::load(const std::string& name) {
  const auto path = folder() / name;
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("cannot read the prompt template {}", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return PromptTemplate(name, text.str());
}

std::string PromptTemplate::render(const std::map<std::string, std::string>& values) const {
  std::string out;
  std::size_t at = 0;
  while (true) {
    const std::size_t open = text_.find("{{", at);
    if (open == std::string::npos) break;
    const std::size_t close = text_.find("}}", open + 2);
    if (close == std::string::npos) break;
    const std::string key = text_.substr(open + 2, close - open - 2);
    auto it = values.find(key);
    if (it == values.end())
      throw std::runtime_error(
          fmt::format("prompt template {} has a placeholder {{{{{}}}}} that has no value", name_, key));
    out += text_.substr(at, open - at);
    out += it->second;
    at = close + 2;
  }
  out += text_.substr(at);
  return out;
}

}  // namespace nova
