#pragma once
// Writing a file that other jobs may be reading: the text goes to a fresh temporary file beside it,
// which then replaces the file in one rename, so a reader sees the old file or the new one, never
// a half-written one (two evaluations of one group rewrite its reference while a worker loads it).
#include <filesystem>
#include <string>

namespace nova {

// Throws std::runtime_error naming the file where it cannot be written.
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

}  // namespace nova
