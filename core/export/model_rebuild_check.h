#pragma once
// The check every export runs before it writes a package (`nova export` and the studio's Export
// wizard): the model file rebuilds its Model from get_init_inputs(), since the package's ModelNew takes
// the same constructor arguments, and get_inputs() returns a list. Runs resources/export/check_model.py
// with the project's Python.
#include <filesystem>
#include <stdexcept>
#include <string>

namespace nova {

class ModelRebuildCheck {
 public:
  // The interpreter could not be started at all (not a problem of the model).
  class CannotRun : public std::runtime_error {
   public:
    using std::runtime_error::runtime_error;
  };
  // Throws ExportError with the reason (the model's own error, or a timeout) when the model does not
  // rebuild, CannotRun when `python` cannot be run.
  static void check(const std::string& python, const std::filesystem::path& model);
};

}  // namespace nova
