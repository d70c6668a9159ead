#pragma once
// Files the user names (a model, a captured graph, a candidate), checked before any work starts so
// that a wrong one gets one precise sentence: the file, and what is wrong with it ("is a directory",
// "is not a Python file", the JSON parser's reason at its line and column). Every check throws
// std::invalid_argument with that sentence; the CLI answers it with exit code 2.
#include <exception>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace nova {

// Checks and reads of user-named files (see above).
class InputFile {
 public:
  // `path` names a regular file that can be read; `what` names it in the message ("model").
  static void require_file(const std::filesystem::path& path, const std::string& what);
  // A model for intake: a readable .py file of text (no NUL bytes).
  static void require_python_model(const std::filesystem::path& path);
  // The JSON in `path`; malformed JSON is reported with the parser's reason, kept short.
  static nlohmann::json read_json(const std::filesystem::path& path, const std::string& what);
  // The JSON in `path` as a `T`; JSON of another shape is "<what> <path> is not <kind>: <reason>".
  template <typename T>
  static T read_json_as(const std::filesystem::path& path, const std::string& what, const std::string& kind) {
    nlohmann::json j = read_json(path, what);
    try {
      return j.get<T>();
    } catch (const std::exception& e) {
      throw std::invalid_argument(what + " " + path.string() + " is not " + kind + ": " + short_reason(e));
    }
  }
  // `e`'s message without nlohmann's "[json.exception...]" tag, on one line, at most `limit`
  // characters (the parser quotes what it last read, which may be a whole kernel's source).
  static std::string short_reason(const std::exception& e, std::size_t limit = 160);
};

}  // namespace nova
