#!/usr/bin/env bash
# CTest's python.module: the module's pytest suite under the validation layer (VK_INSTANCE_LAYERS: the engine
# the module creates has no validation option of its own), failing on any validation message as the C++
# suites do. Usage: run.sh <build dir> <source dir>
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
log=$build/python-tests.log
PYTHONPATH=$build/python VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation \
  /usr/bin/python3 -m pytest -q -s -p no:cacheprovider "$src/tests/python" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if grep -qE 'Validation (Error|Warning)|VUID-' "$log"; then
  echo "python.module: validation messages (above)"
  exit 1
fi
exit "$status"
