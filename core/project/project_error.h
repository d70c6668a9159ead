#pragma once
#include <stdexcept>
#include <string>
#include <utility>

namespace nova {

// The one error the project store throws: a plain sentence for the user ("project.nova was written
// by a newer Nova ...: nothing was changed"), shown as is by the CLI and the studio. A damaged
// project (a file that is not a database, damaged pages, no Nova schema) says so in its kind, so the
// caller can offer move_aside (core/project/damaged_project.h); SQLite's own words (its check's
// output, one line per problem) are kept apart in detail(), for a "details" fold.
class ProjectError : public std::runtime_error {
 public:
  enum class Kind { other, damaged };

  explicit ProjectError(const std::string& message) : std::runtime_error(message) {}
  ProjectError(Kind kind, const std::string& message, std::string detail)
      : std::runtime_error(message), kind_(kind), detail_(std::move(detail)) {}

  Kind kind() const { return kind_; }
  bool damaged() const { return kind_ == Kind::damaged; }
  const std::string& detail() const { return detail_; }  // empty when there is none

 private:
  Kind kind_ = Kind::other;
  std::string detail_;
};

}  // namespace nova
