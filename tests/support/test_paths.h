#pragma once
// Paths the tests read: recorded fixtures, the shared example set (../shared beside the clone,
// or $NOVA_SHARED), and a scratch folder per test run.
#include <filesystem>
#include <string>

namespace nova::test {

std::filesystem::path fixtures_dir();
std::filesystem::path shared_dir();
std::filesystem::path shared_examples_dir();
std::filesystem::path repo_examples_dir();
// A fresh, empty folder under the build tree, private to the running test.
std::filesystem::path scratch_dir(const std::string& name);
std::filesystem::path nova_binary();  // the built `nova` executable
// <build>/test-output: screenshots and recordings a person looks at after the tests.
std::filesystem::path test_output_dir();

}  // namespace nova::test
