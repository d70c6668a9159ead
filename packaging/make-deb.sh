#!/usr/bin/env bash
# Builds the Debian package of nova-studio and nova (CPack, cmake/NovaPackaging.cmake) from a build
# folder (default: build, made by packaging/build.sh if missing). Prints the .deb's path.
#   packaging/make-deb.sh [BUILD_DIR]
# Install it with `sudo apt install ./build/deb/nova-studio_*_amd64.deb`; packaging/test-deb.sh installs it
# into a clean Debian chroot and starts both programs there.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${1:-build}"
[ -f "$build/build.ninja" ] || packaging/build.sh "$build" >&2
cmake --build "$build" --target nova nova-studio nova_tracer >&2
command -v dpkg-shlibdeps >/dev/null || { echo "make-deb: dpkg-shlibdeps is missing (apt install dpkg-dev)" >&2; exit 1; }
rm -rf "$build/deb"
(cd "$build" && cpack -G DEB -B deb -D CPACK_STRIP_FILES=ON >&2)
ls "$build"/deb/nova-studio_*_amd64.deb
