# shellcheck shell=bash
# Sourced by the GPU sets that run named phases (tools/gpu/sets/check-and-bench.sh, epilogue.sh, dequant.sh):
# each phase's output logged to $OUT/NAME.txt and timed, failures counted in $failures (77, a case skipped
# because the device lacks a kernel, is not a failure); the suites run under the validation layer where
# it is there.
failures=0

have_layer() { ls /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json >/dev/null 2>&1; }

phase() {  # phase NAME COMMAND...: runs it, logs to $OUT/NAME.txt, says how long it took
  local name=$1 start rc
  shift
  start=$(date +%s)
  echo "== $name"
  "$@" 2>&1 | tee "$OUT/$name.txt"
  rc=${PIPESTATUS[0]}
  echo "== $name: exit $rc, $(($(date +%s) - start)) s"
  ((rc == 0 || rc == 77)) || failures=$((failures + 1))
}

validation() {  # the layer where .gl's packages put it (tools/gpu/sets/fetch-vulkan-layer.sh), else without
  if have_layer; then
    "$@"
  else
    echo "(no validation layer: running without it)"
    VKGEMM_TEST_VALIDATION=0 "$@"
  fi
}
