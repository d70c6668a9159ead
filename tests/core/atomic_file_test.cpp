// write_file_atomically: a file rewritten while others read it is always seen whole (a group's
// reference, rewritten for each version evaluated, once reached a worker half-written).
#include <atomic>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "core/env/atomic_file.h"
#include "support/test_paths.h"

namespace nova {
namespace {
namespace fs = std::filesystem;

TEST(AtomicFile, ReadersSeeTheWholeFileWhileItIsRewritten) {
  const fs::path dir = test::scratch_dir("atomic_file");
  const fs::path file = dir / "group0.reference.py";
  std::string text = "def module_fn(x):\n    return x\n\n\ndef get_inputs():\n    return []\n";
  for (int i = 0; i < 12; ++i) text += text.substr(0, 64);  // a few KB: several write calls' worth
  write_file_atomically(file, text);
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int i = 0; i < 400; ++i) write_file_atomically(file, text);
    done = true;
  });
  int reads = 0, torn = 0;
  while (!done || reads < 50) {
    if (test::read_text(file) != text) ++torn;
    ++reads;
  }
  writer.join();
  EXPECT_EQ(torn, 0) << "of " << reads << " reads";
  EXPECT_EQ(test::read_text(file), text);
  int leftovers = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename() != file.filename()) ++leftovers;
  EXPECT_EQ(leftovers, 0);  // no temporary file stays behind
}

TEST(AtomicFile, AFolderThatIsNotThereIsAnErrorNamingTheFile) {
  const fs::path file = test::scratch_dir("atomic_file_missing") / "absent" / "v3.ext.cu";
  try {
    write_file_atomically(file, "x");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(file.parent_path()));
}

}  // namespace
}  // namespace nova
