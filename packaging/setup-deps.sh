#!/usr/bin/env bash
# Installs everything Nova Studio needs on a fresh Debian 12 machine:
# the apt packages and a Python virtual environment (outside the clone) with the
# pinned worker packages. Idempotent: a second run on a ready machine downloads nothing.
#
#   packaging/setup-deps.sh            # everything (studio + engine + tests)
#   NOVA_HEADLESS=1 packaging/setup-deps.sh   # engine only, no Qt (GPU servers)
#
# The venv lives in $NOVA_VENV (default ~/.local/share/nova/venv); its path is
# what the README commands and .ci/run use.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NOVA_VENV="${NOVA_VENV:-$HOME/.local/share/nova/venv}"

apt_pkgs=(cmake ninja-build g++ pkg-config python3-venv
          libsqlite3-dev nlohmann-json3-dev libfmt-dev libspdlog-dev libcli11-dev
          libgtest-dev libgmock-dev libdtl-dev libgraphviz-dev libcurl4-openssl-dev
          bubblewrap
          # the client report (nova report): WeasyPrint's Pango, and pdftoppm for looking at its pages
          libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 poppler-utils)
if [ "${NOVA_HEADLESS:-0}" != 1 ]; then
  apt_pkgs+=(qt6-base-dev qt6-base-dev-tools qt6-charts-dev libqt6opengl6-dev qt6-svg-dev
             libqscintilla2-qt6-dev libgl-dev xvfb xauth qtkeychain-qt6-dev
             dpkg-dev debootstrap)  # the .deb (packaging/make-deb.sh) and its install test
fi

missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing apt packages: ${missing[*]}"
  sudo_cmd=""; [ "$(id -u)" != 0 ] && sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python: a venv outside the clone so a warm machine never downloads torch again.
py="${NOVA_PYTHON_BOOTSTRAP:-python3}"
if [ ! -x "$NOVA_VENV/bin/python" ]; then
  echo "setup: creating Python venv at $NOVA_VENV"
  mkdir -p "$(dirname "$NOVA_VENV")"
  "$py" -m venv "$NOVA_VENV"
fi
stamp="$NOVA_VENV/.nova-requirements.sha256"
want="$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: installing Python packages from packaging/requirements.txt (torch is ~2.7 GB the first time)"
  "$NOVA_VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
  "$NOVA_VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$here/requirements.txt"
  echo "$want" > "$stamp"
fi
echo "setup: ready (venv: $NOVA_VENV)"
