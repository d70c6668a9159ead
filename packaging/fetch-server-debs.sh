#!/usr/bin/env bash
# Downloads the Debian .deb files of the small dev packages a GPU server may lack (SQLite headers,
# CLI11, dtl, libcurl headers) into .carry/debs, for packaging/gpu-server.sh to unpack there. Run on a machine
# with apt (Debian 12). .carry/ is git-ignored.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mkdir -p .carry/debs
cd .carry/debs
for p in libsqlite3-dev libcli11-dev libdtl-dev libcurl4-openssl-dev; do
  ls ${p}_*.deb >/dev/null 2>&1 || apt-get download -qq "$p"
done
ls -1
