#include "support/graph_fixtures.h"

#include <fstream>
#include <sstream>

#include "support/test_paths.h"

namespace nova::test {

ModelGraph graph_fixture(const std::string& name, const std::string& dtype) {
  std::ifstream in(fixtures_dir() / "graphs" / (name + ".json"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  const std::string from = "\"float32\"", to = "\"" + dtype + "\"";
  if (from != to)
    for (std::size_t p = 0; (p = text.find(from, p)) != std::string::npos; p += to.size())
      text.replace(p, from.size(), to);
  return nlohmann::json::parse(text).get<ModelGraph>();
}

}  // namespace nova::test
