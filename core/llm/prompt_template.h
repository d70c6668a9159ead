#pragma once
// A prompt template from resources/prompts/ (the wording lives there, not in C++): its text with
// {{name}} placeholders, filled by render(). A placeholder without a value is an error naming it and
// the file, so no prompt goes out with a hole in it.
#include <filesystem>
#include <map>
#include <string>

namespace nova {

class PromptTemplate {
 public:
  // resources/prompts/<name>; throws std::runtime_error naming the file when it cannot be read.
  static PromptTemplate load(const std::string& name);
  PromptTemplate(std::string name, std::string text) : name_(std::move(name)), text_(std::move(text)) {}
  std::string render(const std::map<std::string, std::string>& values) const;
  static std::filesystem::path folder();

 private:
  std::string name_, text_;
};

}  // namespace nova
