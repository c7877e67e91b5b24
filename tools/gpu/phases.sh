# Sourced by the GPU scripts that run named phases (tools/gpu/epilogue.sh, tools/gpu/dequant.sh): each phase's
# output logged to $OUT/NAME.txt and timed, failures counted in $failures (77, a case skipped because the
# device lacks a kernel, is not a failure).
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
