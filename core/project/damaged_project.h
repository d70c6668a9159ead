#pragma once
// A way out of a project that cannot be opened (ProjectError::damaged()): its files are moved aside,
// kept beside the new project for the user or support to look at, and a new project can start in
// the same folder.
#include <filesystem>

namespace nova {

// Renames `folder`/project.nova, and its -wal and -shm files where present, to
// project.nova.damaged-<UTC time>[-N] (-wal, -shm appended as SQLite expects, so the damaged file
// opens with its WAL in any SQLite tool). Returns the new path of the main file. Throws ProjectError
// when there is no project file or a rename fails (then the files already moved are moved back).
std::filesystem::path move_aside(const std::filesystem::path& folder);

}  // namespace nova
