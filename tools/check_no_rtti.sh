#!/usr/bin/env bash
# The library is compiled with RTTI (so that clients built with it link) but must not use it:
# fails if library code calls typeid or dynamic_cast.
set -euo pipefail
cd "$(dirname "$0")/.."
if grep -rnE '\b(typeid|dynamic_cast)\b' slinky --include=*.h --include=*.cc | grep -v '/test/'; then
  echo "check_no_rtti: the library must not use RTTI (see CMakeLists.txt)" >&2
  exit 1
fi
echo "check_no_rtti: no RTTI in the library"
