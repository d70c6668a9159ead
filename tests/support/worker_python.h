#pragma once
// For tests that run the worker's Python package directly: the environment that puts
// resources/python on PYTHONPATH, and whether an interpreter has torch (else the test skips).
#include <string>

#include "core/worker/child_process.h"

namespace nova::test {

ChildProcess::Env worker_env();
bool has_torch(const std::string& python);

}  // namespace nova::test
