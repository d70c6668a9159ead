# Installation and the Debian package (CPack): `cmake --install` puts the programs in <prefix>/bin,
# the plugins in <prefix>/lib/nova, resources/ and kernels/ in <prefix>/share/nova (where the installed
# programs look: core/env/resource_paths.h), and the studio's desktop entry and icon where desktops
# find them. packaging/make-deb.sh builds the .deb (`cpack -G DEB`); packaging/test-deb.sh installs it
# into a clean Debian chroot and starts it.
#
# The CUDA Toolkit is not a Debian package: the programs find NVRTC and CUPTI in /usr/local/cuda
# (the toolkit's default place, an RPATH), and the package says so rather than depend on it. The Python
# worker's torch comes from the user's environment (packaging/setup-deps.sh makes one), as in a build.
include(GNUInstallDirs)

set(NOVA_INSTALL_RPATH "/usr/local/cuda/lib;/usr/local/cuda/lib64;${CUDAToolkit_LIBRARY_DIR}")
list(REMOVE_DUPLICATES NOVA_INSTALL_RPATH)

install(TARGETS nova RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
set_target_properties(nova PROPERTIES INSTALL_RPATH "${NOVA_INSTALL_RPATH}")
if(TARGET nova-studio)
  install(TARGETS nova-studio RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  set_target_properties(nova-studio PROPERTIES INSTALL_RPATH "${NOVA_INSTALL_RPATH}")
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/deb/nova-studio.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
  install(FILES ${PROJECT_SOURCE_DIR}/resources/icons/nova.svg
          DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps RENAME nova-studio.svg)
endif()
# The tracer, injected into workers; the LibTorch probe is not installed: it links the torch of the
# build machine's venv, which an installed system does not have (nova doctor asks the worker's Python).
install(TARGETS nova_tracer LIBRARY DESTINATION lib/nova)  # where core/env/resource_paths looks
set_target_properties(nova_tracer PROPERTIES INSTALL_RPATH "${NOVA_INSTALL_RPATH}")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/resources/ DESTINATION ${CMAKE_INSTALL_DATADIR}/nova/resources
        PATTERN "__pycache__" EXCLUDE PATTERN "*.pyc" EXCLUDE PATTERN "*.qrc" EXCLUDE)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/kernels/ DESTINATION ${CMAKE_INSTALL_DATADIR}/nova/kernels)

set(CPACK_PACKAGE_NAME "nova-studio")
set(CPACK_PACKAGE_VENDOR "Neural Nova")
set(CPACK_PACKAGE_CONTACT "Neural Nova <engineering@neuralnova.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU kernel studio: profile PyTorch models, generate, validate and ship fused CUDA kernels")
set(CPACK_PACKAGE_DESCRIPTION "Nova Studio (nova-studio) and its headless twin (nova) open a PyTorch model, \
profile it with CUPTI, generate fused CUDA kernels for its hot ops, validate and benchmark them against \
eager and torch.compile, and export a pip-installable drop-in package. Needs the CUDA Toolkit 13 in \
/usr/local/cuda (NVRTC, CUPTI) and a Python with torch for its workers (packaging/setup-deps.sh in the \
source tree makes one; set the interpreter in the studio's settings or NOVA_PYTHON).")
set(CPACK_GENERATOR "DEB")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "devel")
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://neuralnova.invalid/studio")
# The shared libraries' packages, found by dpkg-shlibdeps; the CUDA Toolkit's NVRTC and CUPTI are
# private (not from a Debian package).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "${CUDAToolkit_LIBRARY_DIR};/usr/local/cuda/lib;/usr/local/cuda/lib64")
# What the programs run, beyond linked libraries: the workers' Python, Graphviz's dot (graph
# layout), bubblewrap (the LLM sandbox), a compiler for torch extensions.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3, python3-venv, graphviz, bubblewrap")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "g++, ninja-build, xvfb")
include(CPack)
