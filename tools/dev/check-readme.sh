#!/usr/bin/env bash
# Runs the README's commands (or another page's) as written, so that none of them goes stale.
# Usage: tools/dev/check-readme.sh BUILD_DIR [SOURCE_DIR [PAGE]]   (BUILD_DIR: a Release build, e.g. build/release;
# PAGE: a Markdown file relative to SOURCE_DIR, default README.md; docs/distributed.md is checked so too)
# Every ```sh block's commands run in order, in one shell, from a scratch folder laid out like the
# repository's root (tools/, docs/, ... linked to SOURCE_DIR; build/release linked to BUILD_DIR; HOME the
# scratch folder, so `~/.local` stays inside it); a ```cpp block whose first line is `// NAME: ...`, or a
# ```python block whose first line is `# NAME: ...`, is written there as NAME first. The commands that install packages, build, or run the whole suite are
# skipped, each named with the reason; every other command runs, and the first that fails fails the script.
set -euo pipefail
build=$(cd "${1:?usage: tools/dev/check-readme.sh BUILD_DIR [SOURCE_DIR [PAGE]]}" && pwd)
src=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
page=${3:-README.md}
readme=$src/$page
work=$(mktemp -d "${TMPDIR:-/tmp}/vkgemm-readme.XXXXXX")
trap 'rm -rf "$work"' EXIT
for entry in "$src"/*; do
  [[ $(basename "$entry") == build ]] || ln -s "$entry" "$work/$(basename "$entry")"
done
mkdir "$work/build" && ln -s "$build" "$work/build/release"

# skip_reason COMMAND: why the README command is not run here, or nothing.
skip_reason() {
  case $1 in
    tools/install-deps.sh*) echo "installs packages with apt-get: CI's tools/run-tests.sh ran it" ;;
    "cmake --preset release && cmake --build --preset release"*) echo "the build this check runs from" ;;
    tools/run-bench.sh*) echo "installs and builds first; the bench and report it runs are checked below" ;;
    tools/run-tests.sh*|tools/run-demo.sh*) echo "installs, builds and runs the whole suite or the demo" ;;
    "git clone"*COSMA*) echo "fetches COSMA's source (Debian does not package it; the check has no network)" ;;
    "cmake "*COSMA*|*" COSMA/build/"*) echo "builds or runs COSMA, whose source the check does not have" ;;
  esac
}

# The README's blocks, one command a line (continuations joined), and its C++ and Python files.
script=$work/readme-commands.sh
echo 'set -euo pipefail' > "$script"
ran=0 skipped=0
in_block="" block_file="" pending=""
while IFS= read -r line; do
  if [[ -z $in_block ]]; then
    case $line in
      '```sh') in_block=sh ;;
      '```cpp') in_block=cpp; block_file="" ;;
      '```python') in_block=python; block_file="" ;;
    esac
    continue
  fi
  if [[ $line == '```' ]]; then
    in_block=""
    continue
  fi
  if [[ $in_block == cpp || $in_block == python ]]; then
    if [[ -z $block_file ]]; then
      [[ $line =~ ^(//|#)\ ([A-Za-z0-9_.-]+): ]] || { echo "check-readme: a $in_block block must start with a comment '// NAME: ...' or '# NAME: ...'" >&2; exit 1; }
      block_file=${BASH_REMATCH[2]}
      : > "$work/$block_file"
    fi
    printf '%s\n' "$line" >> "$work/$block_file"
    continue
  fi
  pending+=$line
  if [[ $pending == *\\ ]]; then
    pending=${pending%\\}
    continue
  fi
  command=$(sed -E 's/[[:space:]]+#[[:space:]].*$//; s/^[[:space:]]+//; s/[[:space:]]+$//' <<<"$pending")
  pending=""
  [[ -n $command ]] || continue
  why=$(skip_reason "$command")
  if [[ -n $why ]]; then
    echo "skip: $command  ($why)"
    skipped=$((skipped + 1))
  else
    printf 'echo %q\n%s\n' "run:  $command" "$command" >> "$script"
    ran=$((ran + 1))
  fi
done < "$readme"
((ran > 0)) || { echo "check-readme: no command found in $readme" >&2; exit 1; }
(cd "$work" && HOME=$work bash "$script")
echo "check-readme: $page's $ran commands ran as written ($skipped skipped, named above)"
