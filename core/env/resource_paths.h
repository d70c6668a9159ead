#pragma once
// Where the running programs find what ships beside them: resources/ (the Python worker
// package, example models) and kernels/. $NOVA_RESOURCES overrides the source-tree default.
#include <filesystem>
#include <string>

namespace nova {

std::filesystem::path resources_dir();
std::filesystem::path python_package_dir();  // resources/python: goes on the workers' PYTHONPATH
std::filesystem::path examples_dir();        // resources/examples
std::filesystem::path kernels_dir();
// The default worker interpreter: $NOVA_PYTHON, the setup script's venv, or python3.
std::string default_python();
// The venv packaging/setup-deps.sh creates ($NOVA_VENV or ~/.local/share/nova/venv).
std::filesystem::path default_venv();

}  // namespace nova
