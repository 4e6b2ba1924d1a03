#!/usr/bin/env bash
# Generates the API reference of slinky's public headers (docs/Doxyfile) as HTML, and fails if
# doxygen warns (an undocumented public declaration, a broken doc command, ...), printing the
# warnings. Installs Debian's doxygen with apt-get when it is missing.
# Usage: tools/apidoc.sh [output dir]   (default: build/apidoc in the source tree; then open
# <output dir>/html/index.html). It takes a few seconds.
# With SLINKY_APIDOC_NO_INSTALL=1 it does not install doxygen, and exits with 77 (a skip for
# CTest) when doxygen is missing.
set -euo pipefail
out=$(realpath -m "${1:-$(dirname "$0")/../build/apidoc}")
cd "$(dirname "$0")/.."
doxygen=${DOXYGEN:-doxygen}
if ! command -v "$doxygen" >/dev/null; then
  if [ "${SLINKY_APIDOC_NO_INSTALL:-0}" = 1 ]; then
    echo "SKIP: doxygen is not installed (tools/apidoc.sh installs it: apt-get install doxygen)"
    exit 77
  fi
  echo "apidoc: installing doxygen"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq doxygen
  doxygen=doxygen
fi
mkdir -p "$out"
log="$out/warnings.log"
rm -rf "$out/html" "$log"
# The Doxyfile's settings, with the output places of this run appended (later settings win).
{
  cat docs/Doxyfile
  echo "OUTPUT_DIRECTORY = \"$out\""
  echo "WARN_LOGFILE = \"$log\""
} | "$doxygen" -
if [ -s "$log" ]; then
  # Doxygen repeats some warnings (a member listed on a file and a namespace page): print each once.
  echo "apidoc: doxygen warned (docs/Doxyfile; every public declaration needs a /// comment):"
  awk '!seen[$0]++' "$log"
  exit 1
fi
echo "apidoc: $out/html/index.html"
