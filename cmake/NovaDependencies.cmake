# Finds every external package once, with FeatureSummary properties, and defines
# imported targets for the ones Debian ships without a CMake config (QScintilla).

find_package(Threads REQUIRED)

find_package(CUDAToolkit REQUIRED)
set_package_properties(CUDAToolkit PROPERTIES TYPE REQUIRED
  PURPOSE "CUDA driver API, NVRTC (fast-path builds) and CUPTI (tracing)")

find_package(nlohmann_json 3.10 REQUIRED)
set_package_properties(nlohmann_json PROPERTIES TYPE REQUIRED PURPOSE "JSON on disk and on the worker protocol")
find_package(fmt REQUIRED)
set_package_properties(fmt PROPERTIES TYPE REQUIRED PURPOSE "formatting")
find_package(spdlog REQUIRED)
set_package_properties(spdlog PROPERTIES TYPE REQUIRED PURPOSE "logging")
find_package(CLI11 CONFIG REQUIRED)
set_package_properties(CLI11 PROPERTIES TYPE REQUIRED PURPOSE "the nova command line")
find_package(SQLite3 REQUIRED)
set_package_properties(SQLite3 PROPERTIES TYPE REQUIRED PURPOSE "the project store")
find_package(CURL REQUIRED)
set_package_properties(CURL PROPERTIES TYPE REQUIRED PURPOSE "HTTP to LLM providers (libcurl4-openssl-dev)")

# dtl: header-only diff library (Debian libdtl-dev).
find_path(DTL_INCLUDE_DIR dtl/dtl.hpp)
if(NOT DTL_INCLUDE_DIR)
  message(FATAL_ERROR "dtl (libdtl-dev) not found: run packaging/setup-deps.sh")
endif()
add_library(nova_dtl INTERFACE)
target_include_directories(nova_dtl SYSTEM INTERFACE ${DTL_INCLUDE_DIR})

if(NOVA_WITH_TORCH)
  # torch's CMake config lives in the pip package (torch.utils.cmake_prefix_path).
  # Name the architecture so torch's config does not try to run a GPU probe at configure time
  # (CI has no GPU), and keep its CUDA checks on a dialect nvcc knows.
  if(NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
    set(ENV{TORCH_CUDA_ARCH_LIST} "9.0")
  endif()
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_EXTENSIONS OFF)
  find_package(Torch QUIET)
  set_package_properties(Torch PROPERTIES TYPE OPTIONAL
    URL "https://pypi.org/project/torch/"
    PURPOSE "LibTorch in nova_core: give CMAKE_PREFIX_PATH the value of torch.utils.cmake_prefix_path")
endif()
add_feature_info(LibTorch Torch_FOUND "LibTorch linked into nova_core")

if(NOVA_BUILD_UI)
  find_package(Qt6 6.4 REQUIRED COMPONENTS Widgets Charts PrintSupport Svg Test)
  set_package_properties(Qt6 PROPERTIES TYPE REQUIRED PURPOSE "the studio")

  # Graphviz (libgvc/libcgraph) lays out the model graph.
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(GRAPHVIZ REQUIRED IMPORTED_TARGET libgvc libcgraph)

  # QScintilla ships no CMake config on Debian: import it by hand.
  find_library(QSCINTILLA_LIBRARY NAMES qscintilla2_qt6
    PATHS /usr/lib/x86_64-linux-gnu /usr/lib)
  find_path(QSCINTILLA_INCLUDE_DIR Qsci/qsciscintilla.h
    PATHS /usr/include/x86_64-linux-gnu/qt6 /usr/include/qt6)
  if(NOT QSCINTILLA_LIBRARY OR NOT QSCINTILLA_INCLUDE_DIR)
    message(FATAL_ERROR "QScintilla for Qt 6 (libqscintilla2-qt6-dev) not found: run packaging/setup-deps.sh")
  endif()
  add_library(QScintilla::QScintilla SHARED IMPORTED)
  set_target_properties(QScintilla::QScintilla PROPERTIES
    IMPORTED_LOCATION ${QSCINTILLA_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES ${QSCINTILLA_INCLUDE_DIR}
    INTERFACE_COMPILE_DEFINITIONS QSCINTILLA_DLL
    INTERFACE_LINK_LIBRARIES "Qt6::Widgets;Qt6::PrintSupport")
  add_feature_info(QScintilla ON "the CUDA editor (${QSCINTILLA_LIBRARY})")
endif()

find_package(GTest)
set_package_properties(GTest PROPERTIES TYPE REQUIRED PURPOSE "unit tests")
