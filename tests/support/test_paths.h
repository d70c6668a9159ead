#pragma once
// Paths the tests read: recorded fixtures, the shared example set (../shared beside the clone,
// or $NOVA_SHARED), and a scratch folder per test run.
#include <filesystem>
#include <string>

namespace nova::test {

// <source>/tests/fixtures, or $NOVA_TEST_FIXTURES (a test binary carried to another machine, whose
// checkout is elsewhere); tests/support/ is beside it (the scripted LLM server).
std::filesystem::path fixtures_dir();
std::filesystem::path shared_dir();
std::filesystem::path shared_examples_dir();
std::filesystem::path repo_examples_dir();
// A fresh, empty folder under test_output_dir(), private to the running test.
std::filesystem::path scratch_dir(const std::string& name);
std::filesystem::path nova_binary();  // the built `nova` executable
// <build>/test-output, or $NOVA_TEST_OUTPUT (a test binary carried to another machine): screenshots
// and recordings a person looks at after the tests.
std::filesystem::path test_output_dir();
// A file's whole content ("" where it cannot be read).
std::string read_text(const std::filesystem::path& path);

}  // namespace nova::test
