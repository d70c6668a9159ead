#!/usr/bin/env bash
# Installs the .deb of nova-studio (packaging/make-deb.sh) into a clean Debian 12 chroot and starts both
# programs there, as a user on a fresh machine would: apt installs the package and the dependencies it
# declares (nothing else), then `nova --version`, `nova --help`, `nova doctor`, `nova-studio --version`
# and `--help` without a display, and nova-studio's window on the offscreen platform, saved as a
# screenshot. The CUDA Toolkit is not a Debian package: /usr/local/cuda is bound into the chroot
# read-only, as the package's description asks of a user.
#   packaging/test-deb.sh BUILD_DIR [OUT_DIR]     (as root, with network for debootstrap and apt)
# Exit 77 (skipped) when not root or debootstrap is missing; the chroot's base is kept in
# $NOVA_CHROOT_BASE (default /var/tmp/nova-deb-base) and copied fresh for every run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="$(realpath -m "${1:-build}")"
out="$(realpath -m "${2:-$build/deb-test}")"
[ "$(id -u)" = 0 ] || { echo "test-deb: needs root (chroot, mounts)"; exit 77; }
command -v debootstrap >/dev/null || { echo "test-deb: debootstrap is missing (apt install debootstrap)"; exit 77; }
[ -d /usr/local/cuda/ ] || { echo "test-deb: no CUDA Toolkit in /usr/local/cuda to bind into the chroot"; exit 77; }
mkdir -p "$out"
deb=$(packaging/make-deb.sh "$build" | tail -1)
echo "test-deb: package $deb ($(du -h "$deb" | cut -f1))"
dpkg-deb -I "$deb" | sed -n '/Package:/,$p'

base="${NOVA_CHROOT_BASE:-/var/tmp/nova-deb-base}"
if [ ! -x "$base/usr/bin/apt-get" ]; then
  rm -rf "$base"
  debootstrap --variant=minbase bookworm "$base" http://deb.debian.org/debian > "$out/debootstrap.log" 2>&1 \
    || { tail -20 "$out/debootstrap.log"; exit 1; }
fi
root=$(mktemp -d /var/tmp/nova-deb-root.XXXXXX)
cleanup() {
  for m in "$root/usr/local/cuda-real" "$root/dev" "$root/proc"; do mountpoint -q "$m" && umount -l "$m"; done
  rm -rf --one-file-system "$root"
}
trap cleanup EXIT
cp -a "$base/." "$root/"
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
mkdir -p "$root/usr/local/cuda-real"
mount --bind -o ro "$(realpath /usr/local/cuda)" "$root/usr/local/cuda-real"
ln -sfn /usr/local/cuda-real "$root/usr/local/cuda"
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp "$deb" "$root/tmp/"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }
in_root apt-get update -qq > "$out/apt.log" 2>&1
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "/tmp/$(basename "$deb")" >> "$out/apt.log" 2>&1 \
  || { tail -30 "$out/apt.log"; exit 1; }
echo "test-deb: installed; $(in_root dpkg-query -W -f='${Package} ${Version} ${Installed-Size} kB' nova-studio)"
run() { echo "\$ $*"; in_root "$@"; }
run nova --version
run nova --help | head -5
run nova-studio --version
run nova-studio --help | head -3
# doctor: the toolkit through the bound /usr/local/cuda; no torch in this chroot, which it must say.
run nova doctor > "$out/doctor.txt" 2>&1 || true
cat "$out/doctor.txt"
grep -q "NVRTC" "$out/doctor.txt"
# The installed programs find what ships beside them: the examples and the worker's package.
in_root test -f /usr/share/nova/resources/python/nova_worker/__main__.py
in_root test -f /usr/lib/nova/libnova_tracer.so
in_root test -f /usr/share/applications/nova-studio.desktop
in_root env QT_QPA_PLATFORM=offscreen timeout 60 nova-studio --screenshot /tmp/studio.png > "$out/studio.txt" 2>&1
cp "$root/tmp/studio.png" "$out/studio.png"
echo "test-deb: nova-studio started and drew its window: $out/studio.png"
