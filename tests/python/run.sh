#!/usr/bin/env bash
# CTest's python.module: the module's pytest suite, its engine under the validation layer
# (Engine(validation=True) counts the messages; the suite fails on any). Usage: run.sh <build dir> <source dir>
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
# The fault layer (tests/fault_layer) the driver-failure test puts in the loader's chain.
export VKGEMM_FAULT_LAYER_DIR=$build/tests/fault_layer
PYTHONPATH=$build/python exec /usr/bin/python3 -m pytest -q -s -p no:cacheprovider "$src/tests/python"
