#pragma once
// Where the running programs find what ships beside them: resources/ (the Python worker package,
// example models, templates), kernels/ and the plugins (libnova_tracer.so). An installed program
// (the .deb: <prefix>/bin/nova) finds them under <prefix>/share/nova and <prefix>/lib/nova; a
// program run from its build tree finds the source tree's and the build's. $NOVA_RESOURCES,
// $NOVA_KERNELS and $NOVA_PLUGIN_DIR override both (a program carried to another machine, such as
// the studio kit of packaging/studio-kit.sh, points them at that machine's tree and build).
#include <filesystem>
#include <string>

namespace nova {

std::filesystem::path resources_dir();
std::filesystem::path python_package_dir();  // resources/python: goes on the workers' PYTHONPATH
std::filesystem::path examples_dir();        // resources/examples
std::filesystem::path kernels_dir();
std::filesystem::path plugin_dir();          // libnova_tracer.so, libnova_torch_probe.so
// The default worker interpreter: $NOVA_PYTHON, the setup script's venv, or python3.
std::string default_python();
// The venv packaging/setup-deps.sh creates ($NOVA_VENV or ~/.local/share/nova/venv).
std::filesystem::path default_venv();
// Where nova keeps its caches (NVRTC's cubins, the workers' bytecode): $NOVA_CACHE, else
// $XDG_CACHE_HOME/nova, else ~/.cache/nova.
std::filesystem::path cache_dir();

}  // namespace nova
