#!/usr/bin/env bash
# CTest's package test: cmake --install into a temporary prefix inside the build folder, then build the
# consumer against it twice (find_package(vkgemm) and pkg-config) and run both, docs/library.md's plan
# example and the installed program; then cpack's .deb and .tar.gz, the .deb unpacked and run.
# Usage: run.sh <build dir> <source dir>
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
work=$build/package-test
prefix=$work/prefix
rm -rf "$work"
cmake --install "$build" --prefix "$prefix" >/dev/null

# The CMake package.
cmake -S "$src/tests/package/consumer" -B "$work/cmake-consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake-consumer" >/dev/null
"$work/cmake-consumer/consumer"

# pkg-config.
export PKG_CONFIG_PATH=$(dirname "$(find "$prefix" -name vkgemm.pc)")
# shellcheck disable=SC2046
c++ -std=c++20 -o "$work/pc-consumer" "$src/tests/package/consumer/main.cpp" $(pkg-config --cflags --libs vkgemm) -lvulkan
"$work/pc-consumer"

# The C ABI from C (vkgemm/vkgemm.h, libvkgemm_c), as C99 with warnings as errors.
cc -std=c99 -Wall -Wextra -Wpedantic -Werror -o "$work/c-consumer" "$src/tests/package/c_consumer.c" \
   -I"$prefix/include" -L"$prefix/lib" -lvkgemm_c -Wl,-rpath,"$prefix/lib"
"$work/c-consumer"

# docs/library.md's plan example, as written (the block after the line naming this test), in a main().
awk '/The `package` test compiles this block/ {found = 1} found && /^```cpp/ {inside = 1; next}
     inside && /^```/ {exit} inside' "$src/docs/library.md" > "$work/docs-example.body"
test -s "$work/docs-example.body"
{ grep '^#include' "$work/docs-example.body"; echo 'int main() {'; grep -v '^#include' "$work/docs-example.body"
  echo 'return 0;'; echo '}'; } > "$work/docs-example.cpp"
# shellcheck disable=SC2046
c++ -std=c++20 -o "$work/docs-example" "$work/docs-example.cpp" $(pkg-config --cflags --libs vkgemm)
"$work/docs-example"

# The installed program.
"$prefix/bin/vkgemm" run --m 33 --n 17 --k 9 --trans-a --beta 2 --layout col --repeat 1 --warmup 0 --verify --validate

# cpack's packages (cmake/package.cmake): the .tar.gz holds every part; the .deb, unpacked into a scratch
# root as dpkg would install it, runs: its vkgemm lists the devices (as JSON too, checked against the
# installed schema) and measures a tiny sweep, and its vkgemm-report, away from any source tree, finds its
# schemas and compares two results (that sweep, and the same one relabelled as a second device).
cpack --config "$build/CPackConfig.cmake" -G "DEB;TGZ" -B "$work/cpack" >/dev/null
deb=$(ls "$work"/cpack/vkgemm_*.deb)
tgz=$(ls "$work"/cpack/vkgemm-*.tar.gz)
listing=$(tar -tzf "$tgz")
for part in bin/vkgemm bin/vkgemm-report include/vkgemm/vkgemm.hpp include/vkgemm/plan.hpp include/vkgemm/version.hpp \
            lib/libvkgemm.a lib/cmake/vkgemm/vkgemmConfig.cmake lib/pkgconfig/vkgemm.pc share/vkgemm/bench.schema.json \
            share/vkgemm/vs-cublas.schema.json share/vkgemm/devices.schema.json include/vkgemm/vkgemm.h \
            lib/libvkgemm_c.so.0 lib/libvkgemm_blas.so.0 lib/libvkgemm_pblas.so.0 lib/python3/dist-packages/vkgemm/__init__.py \
            lib/python3/dist-packages/vkgemm/_capi.py lib/python3/dist-packages/vkgemm/array.py \
            lib/vkgemm/libblas.so.3; do
  grep -q "/$part$" <<<"$listing" || { echo "package test: $tgz lacks $part"; exit 1; }
done
# grep reads every line (no -q): one that stops early would end the writer with SIGPIPE, which pipefail
# reports as a failure whenever the writer still had lines to write.
dpkg-deb --field "$deb" Depends | grep libvulkan1 >/dev/null
root=$work/deb-root
dpkg-deb -x "$deb" "$root"
"$root/usr/bin/vkgemm" devices
"$root/usr/bin/vkgemm" devices --json > "$work/devices.json"
python3 -c 'import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' \
  "$work/devices.json" "$root/usr/share/vkgemm/devices.schema.json"
"$root/usr/bin/vkgemm" bench --sizes 16 --types f32 --kernels naive --repeat 2 --latency-calls 2 --no-progress \
  --json "$work/result.json" >/dev/null
python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); d["device"]["name"] = "Another device"; json.dump(d, open(sys.argv[2], "w"))' \
  "$work/result.json" "$work/another.json"
(cd "$work" && "$root/usr/bin/vkgemm-report" result.json another.json --out report)
grep -q "Another device" "$work/report/report.md" || { echo "package test: the report lacks the second device"; exit 1; }
test -s "$work/report/compare.png" || { echo "package test: the report drew no comparison"; exit 1; }
# The .deb's Python module (finding its libvkgemm_c three folders up) and its drop-in BLAS under Debian's
# NumPy (threshold 0: the product must be counted on the device).
PYTHONPATH=$root/usr/lib/python3/dist-packages /usr/bin/python3 -c 'import numpy as np, vkgemm, sys
assert vkgemm.__file__.startswith(sys.argv[1]), vkgemm.__file__
a = np.arange(12, dtype=np.float32).reshape(3, 4)
assert (vkgemm.matmul(a, a.T) == a @ a.T).all()' "$root"
LD_PRELOAD=$root/usr/lib/libvkgemm_blas.so.0 VKGEMM_BLAS_THRESHOLD=0 VKGEMM_BLAS_VERBOSE=1 /usr/bin/python3 -c '
import numpy as np; a = np.arange(12, dtype=np.float64).reshape(3, 4); b = a.T.copy(); assert (a @ b == [[14, 38, 62], [38, 126, 214], [62, 214, 366]]).all()' \
  2> "$work/preload.log" || { cat "$work/preload.log"; echo "package test: NumPy under the .deb's preloaded BLAS failed"; exit 1; }
grep -q ' 1 GEMMs on the device' "$work/preload.log" || { cat "$work/preload.log"; echo "package test: the .deb's BLAS did not route"; exit 1; }
# ... and its libblas.so.3 alternative, as the alternatives' link would load it (postinst registers it).
dpkg-deb --ctrl-tarfile "$deb" | tar -tf - | grep postinst >/dev/null
LD_LIBRARY_PATH=$root/usr/lib/vkgemm VKGEMM_BLAS_THRESHOLD=0 VKGEMM_BLAS_VERBOSE=1 /usr/bin/python3 -c '
import numpy as np; a = np.arange(12, dtype=np.float32).reshape(3, 4); b = a.T.copy(); assert (a @ b == [[14, 38, 62], [38, 126, 214], [62, 214, 366]]).all()
assert abs(np.linalg.norm(a) - 22.4944) < 1e-3  # a routine the alternative forwards' 2> "$work/alternative.log" \
  || { cat "$work/alternative.log"; echo "package test: NumPy on the .deb's libblas.so.3 alternative failed"; exit 1; }
grep -q ' 1 GEMMs on the device' "$work/alternative.log" || { cat "$work/alternative.log"; echo "package test: the .deb's alternative did not route"; exit 1; }
echo "package test: passed"
