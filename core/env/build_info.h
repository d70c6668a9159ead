#pragma once
// What this build knows about where it was configured: the source tree, the plugin folder in the
// build tree, the CUDA toolkit it found, its version. The values live in one generated translation
// unit (build_info.cpp.in, configured into the build tree), so no other file's compile flags
// depend on the build folder and ccache shares objects between checkouts.
#include <string>

namespace nova::build_info {

const char* version();           // the project version from CMakeLists.txt
const char* source_dir();        // the source tree this build came from
const char* plugin_dir();        // <build>/lib: libnova_tracer.so, libnova_torch_probe.so
const char* cuda_toolkit_dir();  // the toolkit CMake found (CUDAToolkit_LIBRARY_ROOT)

}  // namespace nova::build_info
