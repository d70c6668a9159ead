#pragma once
// Results recorded on the H200 (tests/fixtures), as the tests that replay a worker use them.
#include <nlohmann/json.hpp>

namespace nova::test {

// The full validation recorded for mlp_block g1 (cuBLAS mm sums in another order than eager's addmm:
// it failed), with its trials, checks and method; `passed`: turned into a pass, every trial ok.
nlohmann::json recorded_validation(bool passed);

}  // namespace nova::test
