#!/usr/bin/env bash
# CTest's package test: cmake --install into a temporary prefix inside the build folder, then build the
# consumer against it twice (find_package(vkgemm) and pkg-config) and run both, and the installed program.
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
echo "package test: passed"
