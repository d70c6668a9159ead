#!/usr/bin/env bash
# The studio's GPU tests (nova_ui_gpu_tests: the Profile action and the LLM search end to end) for a GPU
# box that has no Qt, built on this machine and packed with what it needs to run there, into
# OUT_DIR/kit.tar.xz (default .carry/studio, git-ignored, named in a device call's carry);
# packaging/studio-gpu.sh runs it on the box.
# The kit (one folder, kit/):
#   bin/nova_ui_gpu_tests   stripped of debug info; DT_RPATH $ORIGIN/../lib, then the CUDA toolkit's folders
#   bin/qt.conf             Qt's plugins are the kit's (plugins/), whatever Qt's compiled-in folder holds
#   lib/                    every shared library the binary and the plugins load, found by ldd, except glibc's
#                           own, libstdc++ and libgcc_s (the box's are newer), CUDA's (the box's toolkit and
#                           driver) and libcurl (the box's)
#   lib/graphviz/           Graphviz's dot layout plugin (the model graph's layout) and its config6a
#   plugins/platforms/libqoffscreen.so   DT_RPATH $ORIGIN/../../lib
#   fonts/, fonts.conf      DejaVu Sans and Sans Mono (fonts-dejavu-core), and a fontconfig file naming only
#                           that folder
# DT_RPATH, not RUNPATH: it also serves the libraries' own dependencies, so nothing needs LD_LIBRARY_PATH
# (which the worker processes, Python and torch, would inherit).
#   packaging/studio-kit.sh [BUILD_DIR] [OUT_DIR]      (default: build .carry/studio)
# shellcheck disable=SC2016  # '$ORIGIN' is the loader's, not the shell's
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${1:-build}"
out="${2:-.carry/studio}"
binary=nova_ui_gpu_tests
# Where the box's CUDA 13 keeps libnvrtc and libcupti (installer, .deb and pip-like layouts).
cuda_rpath='/usr/local/cuda/lib64:/usr/local/cuda/lib:/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/extras/CUPTI/lib64'

command -v patchelf >/dev/null || apt-get install -y patchelf || { apt-get update && apt-get install -y patchelf; }
cmake --build "$build" -j2 --target "$binary" nova_tracer
qt_plugins=$(qtpaths6 --query QT_INSTALL_PLUGINS 2>/dev/null || true)
[ -f "$qt_plugins/platforms/libqoffscreen.so" ] || qt_plugins=/usr/lib/x86_64-linux-gnu/qt6/plugins
fonts=/usr/share/fonts/truetype/dejavu
[ -f "$fonts/DejaVuSans.ttf" ] || { echo "no DejaVu Sans in $fonts: apt-get install fonts-dejavu-core" >&2; exit 2; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
kit="$stage/kit"
mkdir -p "$kit/bin" "$kit/lib" "$kit/plugins/platforms" "$kit/fonts"
strip --strip-debug -o "$kit/bin/$binary" "$build/tests/$binary"
cp "$qt_plugins/platforms/libqoffscreen.so" "$kit/plugins/platforms/"

# True for a library the box brings itself: glibc's, the compiler runtime, CUDA's, and libcurl (the box's
# headless build links its libcurl.so.4, OpenSSL flavour like Debian's; with it stay out its TLS, Kerberos
# and LDAP libraries, 4.8 MB packed).
from_the_box() {  # NAME PATH
  case "$1" in
    ld-linux*|libc.so.*|libm.so.*|libmvec.so.*|libdl.so.*|libpthread.so.*|librt.so.*|libutil.so.*|libresolv.so.*) return 0 ;;
    libanl.so.*|libnsl.so.*|libnss_*|libBrokenLocale.so.*|libthread_db.so.*|libc_malloc_debug.so.*) return 0 ;;
    libstdc++.so.*|libgcc_s.so.*) return 0 ;;
    libcuda.so*|libnvrtc*|libcupti*|libnvidia-*) return 0 ;;
    libcurl.so.4) return 0 ;;
  esac
  case "$2" in /usr/local/cuda*) return 0 ;; esac
  return 1
}

# What FILE needs (its NEEDED entries) and the kit has not, copied into lib/ under that name, then what
# those need, and so on.
collect() {  # FILE
  local name path resolved
  resolved=$(ldd "$1")
  for name in $(readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    path=$(awk -v n="$name" '$1 == n && $2 == "=>" {print $3}' <<< "$resolved")
    from_the_box "$name" "$path" && continue
    [ -e "$kit/lib/$name" ] && continue
    case "$path" in /*) ;; *) echo "$1 needs $name, which this machine lacks" >&2; exit 1 ;; esac
    cp -L "$path" "$kit/lib/$name"
    chmod u+w "$kit/lib/$name"
    collect "$kit/lib/$name"
  done
}
collect "$kit/bin/$binary"
collect "$kit/plugins/platforms/libqoffscreen.so"
# Graphviz lays out the model graph with its dot plugin, which it looks for in graphviz/ beside the
# libgvc.so it runs from (or $GVBINDIR), listed in config6a: the dot layout and core plugins only.
gv=$(dirname "$(ldd "$kit/bin/$binary" | awk '$1 == "libgvc.so.6" {print $3}')")/graphviz
mkdir -p "$kit/lib/graphviz"
for plugin in libgvplugin_dot_layout.so.6 libgvplugin_core.so.6; do
  cp -L "$gv/$plugin" "$kit/lib/graphviz/"
  collect "$kit/lib/graphviz/$plugin"
  patchelf --force-rpath --set-rpath '$ORIGIN/..' "$kit/lib/graphviz/$plugin"
done
awk '/^libgvplugin_/ {keep = ($1 == "libgvplugin_dot_layout.so.6" || $1 == "libgvplugin_core.so.6")} keep' \
  "$gv/config6a" > "$kit/lib/graphviz/config6a"

patchelf --force-rpath --set-rpath "\$ORIGIN/../lib:$cuda_rpath" "$kit/bin/$binary"
patchelf --force-rpath --set-rpath '$ORIGIN/../../lib' "$kit/plugins/platforms/libqoffscreen.so"
# A library with a RUNPATH of its own would not use the binary's DT_RPATH for its dependencies.
for lib in "$kit"/lib/*.so*; do
  if readelf -d "$lib" | grep -q '(RUNPATH)'; then patchelf --force-rpath --set-rpath '$ORIGIN' "$lib"; fi
done

cat > "$kit/bin/qt.conf" <<'EOF'
[Paths]
Prefix = ..
Plugins = plugins
EOF
cp "$fonts/DejaVuSans.ttf" "$fonts/DejaVuSansMono.ttf" "$kit/fonts/"  # bold is drawn from the regular
# The fonts folder relative to this file, so the kit works wherever it is unpacked; no cache folder
# (two fonts are read in no time, and fontconfig would take a relative one from the working folder).
cat > "$kit/fonts.conf" <<'EOF'
<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
  <dir prefix="relative">fonts</dir>
  <alias><family>sans-serif</family><prefer><family>DejaVu Sans</family></prefer></alias>
  <alias><family>serif</family><prefer><family>DejaVu Sans</family></prefer></alias>
  <alias><family>monospace</family><prefer><family>DejaVu Sans Mono</family></prefer></alias>
</fontconfig>
EOF

# Every library a file of the kit needs is in lib/ or the box's own, and the kit's are what loads.
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
for f in "$kit/bin/$binary" "$kit"/lib/*.so* "$kit"/lib/graphviz/*.so.6 "$kit"/plugins/platforms/*.so; do
  for name in $(needed "$f"); do
    [ -e "$kit/lib/$name" ] || from_the_box "$name" "" || { echo "${f#"$stage"/} needs $name: not in the kit" >&2; exit 1; }
  done
done
outside=$(env -u LD_LIBRARY_PATH ldd "$kit/bin/$binary" "$kit/plugins/platforms/libqoffscreen.so" |
  awk -v kit="$kit/" '$2 == "=>" && index($3, kit) != 1 {print $1}' | sort -u | while read -r name; do
    [ ! -e "$kit/lib/$name" ] || echo "$name"; done)
[ -z "$outside" ] || { echo "loaded from outside the kit although it is in lib/:"; echo "$outside"; exit 1; } >&2

mkdir -p "$out/nova"
# The CUPTI tracer beside the kit, for a box where no headless build was made (packaging/studio-gpu.sh
# prefers the build's); it finds libcupti in the box's CUDA folders.
cp "$build/lib/libnova_tracer.so" "$out/nova/"
patchelf --set-rpath "$cuda_rpath" "$out/nova/libnova_tracer.so"
# The x86 filter first: machine code packs about 5% smaller.
tar -C "$stage" -cf - kit | xz --x86 --lzma2=preset=9e -T0 > "$out/kit.tar.xz"
(cd "$stage" && find kit -type f -printf '%s\t%p\n' | sort -k2 | numfmt --field=1 --to=iec)
echo "$(du -h "$out/kit.tar.xz" | cut -f1) $out/kit.tar.xz: $(find "$kit/lib" -name "*.so*" | wc -l) libraries and plugins, $(du -sh "$kit" | cut -f1) unpacked"
