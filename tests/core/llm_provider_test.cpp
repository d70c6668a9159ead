// LLM providers in the shared settings file (core/env/settings.h, core/llm/llm_provider.h): they
// round-trip beside the keys this version does not know, a wrong value is an error naming the key,
// and no key is ever part of them.
#include "core/llm/llm_provider.h"

#include <fstream>

#include <gtest/gtest.h>

#include "core/env/settings.h"
#include "support/test_paths.h"

namespace nova {
namespace {
using nlohmann::json;

std::filesystem::path write(const std::string& name, const json& j) {
  auto path = test::scratch_dir(name) / "settings.json";
  std::ofstream(path) << j.dump(2);
  return path;
}

TEST(LlmProviderSettings, ProvidersRoundTripBesideUnknownKeys) {
  auto path = write("llm_settings_roundtrip",
                    {{"llm_providers", json::array({{{"name", "claude"},
                                                     {"protocol", "anthropic"},
                                                     {"base_url", "https://api.anthropic.com/v1/"},
                                                     {"model", "claude-sonnet"},
                                                     {"usd_per_mtok_in", 3},
                                                     {"usd_per_mtok_out", 15},
                                                     {"api_key_env", "ANTHROPIC_API_KEY"}}})},
                     {"llm_default_provider", "claude"},
                     {"from_a_newer_nova", 42}});
  Settings s = Settings::load(path);
  ASSERT_EQ(s.llm_providers.size(), 1u);
  const LlmProvider& p = s.llm_providers[0];
  EXPECT_EQ(p.protocol, LlmProtocol::anthropic_messages);
  EXPECT_EQ(p.endpoint(), "https://api.anthropic.com/v1/messages");
  EXPECT_EQ(p.max_tokens, 8192);  // a missing key takes its default
  EXPECT_DOUBLE_EQ(p.cost_usd(1'000'000, 2'000'000), 3 + 30);
  EXPECT_EQ(s.llm_default_provider, "claude");
  s.save(path);
  json saved = json::parse(std::ifstream(path));
  EXPECT_EQ(saved["from_a_newer_nova"], 42);
  EXPECT_EQ(saved["llm_providers"][0]["api_key_env"], "ANTHROPIC_API_KEY");
  EXPECT_FALSE(saved["llm_providers"][0].contains("api_key"));
  EXPECT_EQ(Settings::load(path).llm_providers[0].model, "claude-sonnet");
}

TEST(LlmProviderSettings, AWrongValueNamesTheKey) {
  auto bad_protocol = write(
      "llm_settings_protocol",
      {{"llm_providers", json::array({{{"name", "x"}, {"protocol", "grpc"}, {"base_url", "http://h"}}})}});
  try {
    Settings::load(bad_protocol);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("protocol is 'grpc'"), std::string::npos) << e.what();
  }
  auto bad_type = write(
      "llm_settings_type",
      {{"llm_providers", json::array({{{"name", "x"}, {"base_url", "http://h"}, {"max_tokens", "many"}}})}});
  try {
    Settings::load(bad_type);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("max_tokens"), std::string::npos) << e.what();
  }
}

TEST(LlmProviderSettings, AnUnknownProviderListsTheKnownOnes) {
  LlmProvider a;
  a.name = "local";
  try {
    find_llm_provider({a}, "cloud");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("known: local"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nova
