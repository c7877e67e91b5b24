#!/usr/bin/env bash
# CTest's python.wheel: the one-command install. A fresh venv (with the system's NumPy), `pip install` of the
# wheel the build made (no index: nothing fetched), then vkgemm imported from the venv, away from the build
# folder, and one product checked against NumPy. Usage: wheel.sh <build dir>
set -euo pipefail
build=$(cd "$1" && pwd)
work=$build/python-wheel-test
rm -rf "$work"
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
wheel=$(ls "$build"/python/dist/vkgemm-*.whl)
"$work/venv/bin/pip" install --no-index --no-deps --quiet "$wheel"
cd "$work"
env -u PYTHONPATH "$work/venv/bin/python" - <<'PY'
import numpy as np, vkgemm, os
assert "python-wheel-test/venv" in vkgemm.__file__, vkgemm.__file__
rng = np.random.default_rng(7)
a, b = rng.uniform(-1, 1, (33, 20)).astype(np.float32), rng.uniform(-1, 1, (20, 9)).astype(np.float32)
c = vkgemm.matmul(a, b)
ref = a.astype(np.float64) @ b.astype(np.float64)
bound = 22 * 2.0**-24 * (np.abs(a).astype(np.float64) @ np.abs(b))
assert (np.abs(c - ref) <= bound).all()
print(f"python.wheel: {vkgemm.__file__} on {vkgemm.devices()[0].name}: passed")
PY
