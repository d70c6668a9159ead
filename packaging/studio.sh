#!/usr/bin/env bash
# Sets up, builds and opens the studio on a model (default: the seed demo), with the builtin
# generator. Without a display it runs on a virtual one (Xvfb) and saves a screenshot instead.
#   packaging/studio.sh [MODEL.py]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
model="${1:-resources/examples/conv2d_min_add_multiply.py}"
packaging/setup-deps.sh
packaging/build.sh build
if [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
  exec build/app/nova-studio --generator builtin "$model"
fi
shot="build/studio.png"
echo "studio: no display found; running on a virtual display and saving a screenshot to $shot"
xvfb-run -a -s "-screen 0 1600x1000x24" build/app/nova-studio --generator builtin --screenshot "$shot" "$model"
echo "studio: screenshot saved to $shot"
