#!/usr/bin/env bash
# Ray for the GPU box, which has neither Ray nor a network: the ray version packaging/requirements.txt
# names and its dependencies, as wheels for the box's Python (default 3.12), into DIR (default .carry/ray,
# git-ignored, named in a device call's carry). The ray wheel is 79 MB, more than a device call carries
# (64 MiB in all), so it is written again without its Java jar (ray/jars, 32 MB) and the dashboard's web
# build (ray/dashboard/client/build): the Ray lane (nova_worker/ray_lane.py) uses neither, and the head
# is started without the dashboard (packaging/ray-gpu.sh). Its RECORD lists only what is left.
#   packaging/fetch-ray-wheels.sh [PYTHON_VERSION] [DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
pyver="${1:-3.12}"
dir="${2:-.carry/ray}"
version=$(sed -n 's/^ray==//p' packaging/requirements.txt)
[ -n "$version" ] || { echo "packaging/requirements.txt names no ray version" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --only-binary=:all: --python-version "$pyver" \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
  -d "$tmp" "ray==$version"
rm -rf "$dir"
mkdir -p "$dir"
python3 - "$tmp" "$dir" <<'EOF'
import os, shutil, sys, zipfile
src, dst = sys.argv[1:]
LEFT_OUT = ("ray/jars/", "ray/dashboard/client/build/")
for name in sorted(os.listdir(src)):
    if not name.endswith(".whl"):
        continue
    if not name.startswith("ray-"):
        shutil.copy(os.path.join(src, name), dst)
        continue
    with zipfile.ZipFile(os.path.join(src, name)) as whl, \
         zipfile.ZipFile(os.path.join(dst, name), "w", zipfile.ZIP_DEFLATED) as out:
        for info in whl.infolist():
            if info.filename.startswith(LEFT_OUT):
                continue
            data = whl.read(info)
            if info.filename.endswith(".dist-info/RECORD"):
                data = b"".join(line for line in data.splitlines(keepends=True)
                                if not line.decode().startswith(LEFT_OUT))
            out.writestr(info, data)  # the same entry, permissions included (raylet, gcs_server)
EOF
du -sh "$dir"
ls "$dir"
