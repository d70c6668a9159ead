// Killing a writer at random moments loses nothing it acknowledged. This test binary re-executes
// itself as the writer: with NOVA_STORE_WRITER=<folder> set, a static initializer (before gtest's
// main) writes versions in a loop and prints "<id> <seq>" after each commit, until SIGKILL.
#include <csignal>
#include <cstdio>
#include <random>
#include <set>
#include <sstream>

#include <unistd.h>

#include <gtest/gtest.h>

#include "core/project/project_store.h"
#include "core/worker/child_process.h"
#include "support/test_paths.h"

namespace nova {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string source_for(int64_t seq) {
  // Sizes from a few bytes to several pages, so commits touch one page or many.
  return "// seq " + std::to_string(seq) + "\n" + std::string(static_cast<size_t>((seq * 7919) % 20000), 'k');
}

[[noreturn]] void run_writer(const char* folder) {
  ProjectStore store = ProjectStore::open(folder);
  int64_t group = store.fusion_groups().at(0).id;
  for (int64_t seq = 0;; ++seq) {
    CandidateVersion v;
    v.group_id = group;
    v.origin.kind = OriginKind::builtin;
    v.source = source_for(seq);
    int64_t id = store.add_version(v);
    if (seq % 3 == 0) store.add_build_log({0, id, "nvrtc", seq % 2 == 0, std::string(seq % 5000, 'L'), ""});
    std::string ack = std::to_string(id) + " " + std::to_string(seq) + "\n";
    if (::write(STDOUT_FILENO, ack.data(), ack.size()) != static_cast<ssize_t>(ack.size())) std::_Exit(3);
  }
}

const bool kIsWriter = [] {
  if (const char* folder = std::getenv("NOVA_STORE_WRITER")) run_writer(folder);
  return false;
}();

TEST(ProjectStoreKill, SigkillAtRandomMomentsLosesNothingAcknowledged) {
  ASSERT_FALSE(kIsWriter);
  fs::path dir = test::scratch_dir("store_kill") / "proj";
  { ProjectStore::create(dir).add_fusion_group({0, "g", "{}"}); }
  fs::path self = fs::read_symlink("/proc/self/exe");
  std::mt19937 rng(std::random_device{}());
  std::map<int64_t, int64_t> acknowledged;  // id -> seq
  for (int round = 0; round < 8; ++round) {
    ChildProcess child;
    auto env = ChildProcess::minimal_env();
    env["NOVA_STORE_WRITER"] = dir.string();
    child.start({self.string()}, env);
    // Some rounds die while opening (before or during recovery of the last round's WAL), most in
    // the middle of the write loop.
    auto kill_after = std::chrono::milliseconds(round % 4 == 0 ? rng() % 15 : 20 + rng() % 400);
    auto deadline = std::chrono::steady_clock::now() + kill_after;
    auto record = [&](const std::string& line) {
      std::istringstream in(line);
      int64_t id = 0, seq = 0;
      ASSERT_TRUE(in >> id >> seq) << line;
      acknowledged[id] = seq;
    };
    while (std::chrono::steady_clock::now() < deadline) {
      if (auto line = child.read_line(1ms)) record(*line);
      if (child.eof()) break;
    }
    ASSERT_TRUE(child.running()) << "the writer stopped by itself: " << child.stderr_text();
    ::kill(child.pid(), SIGKILL);
    // Whatever reached the pipe before the kill was acknowledged too.
    while (auto line = child.read_line(2s)) record(*line);
    auto status = child.wait(5s);
    ASSERT_TRUE(status);
    EXPECT_EQ(status->signal, SIGKILL);

    ProjectStore store = ProjectStore::open(dir);
    ASSERT_EQ(store.integrity_check(), "ok") << "round " << round;
    std::map<int64_t, std::string> stored;
    for (const auto& v : store.all_versions()) stored[v.id] = v.source;
    for (const auto& [id, seq] : acknowledged) {
      ASSERT_TRUE(stored.count(id)) << "acknowledged version " << id << " is missing after round " << round;
      ASSERT_EQ(stored[id], source_for(seq));
    }
  }
  EXPECT_GT(acknowledged.size(), 20u) << "too few writes to mean anything";
}

}  // namespace
}  // namespace nova
