#!/usr/bin/python3
"""The drop-in BLAS under driver failures: every counted Vulkan call of its first routed dgemm_ (the engine's
creation and the product) failed in turn by the fault layer (tests/fault_layer), one process each. Each must
end with the right result from the CPU BLAS, one warning that names the failed call and its result (or, for a
buffer's allocation while the engine's pool keeps freed buffers, the pool released and the buffer made on the
device at a second try, with no warning), and a second dgemm_ right as well (on the device again after running
out of memory; on the CPU after a loss, with no second warning). Runs without the validation layer: the loader names the layer through the messenger (the
faults suite walks the same calls under validation).
Usage: test_faults.py <libvkgemm_blas.so> <the fault layer's folder>   (run by CTest, label e2e)
"""

import os
import subprocess
import sys
import tempfile

CHILD = r"""
import ctypes, sys
import numpy as np
lib = ctypes.CDLL(sys.argv[1])
rng = np.random.default_rng(int(sys.argv[2]))
I32 = ctypes.c_int
def dgemm(m, n, k):
    a, b = np.asfortranarray(rng.uniform(-1, 1, (m, k))), np.asfortranarray(rng.uniform(-1, 1, (k, n)))
    c = np.asfortranarray(rng.uniform(-1, 1, (m, n)))
    c0 = c.copy()
    alpha, beta = 0.75, -0.5  # beta != 0: a fallback computing from a C the device half wrote would show
    iv = lambda v: ctypes.byref(I32(v))
    p = lambda x: x.ctypes.data_as(ctypes.c_void_p)
    lib.dgemm_.restype = None
    lib.dgemm_(b"N", b"N", iv(m), iv(n), iv(k), ctypes.byref(ctypes.c_double(alpha)), p(a), iv(m), p(b), iv(k),
               ctypes.byref(ctypes.c_double(beta)), p(c), iv(m), ctypes.c_size_t(1), ctypes.c_size_t(1))
    ref = alpha * a @ b + beta * c0
    bound = (k + 2) * 2.0**-53 * (abs(alpha) * np.abs(a) @ np.abs(b) + abs(beta) * np.abs(c0)) + 1e-300
    assert (np.abs(c - ref) <= bound).all(), f"{np.abs(c - ref).max()} past the bound"
dgemm(23, 17, 11)
dgemm(19, 21, 13)
print("two products right")
"""

RESULTS = {-1: "VK_ERROR_OUT_OF_HOST_MEMORY", -2: "VK_ERROR_OUT_OF_DEVICE_MEMORY", -4: "VK_ERROR_DEVICE_LOST",
           -5: "VK_ERROR_MEMORY_MAP_FAILED"}
# The failures the specification allows each counted call (fault_layer.cpp's table): 1 host memory,
# 2 device memory, 4 device lost, 8 map failed.
LOST = {"vkQueueSubmit", "vkWaitForFences", "vkGetFenceStatus", "vkWaitSemaphores", "vkGetSemaphoreCounterValue",
        "vkGetEventStatus", "vkQueueWaitIdle", "vkDeviceWaitIdle", "vkGetQueryPoolResults"}
DEVICE_ONLY = {"vkResetCommandBuffer", "vkResetFences"}
# A buffer's calls out of memory while the engine's pool keeps freed buffers (engine/buffer_pool.hpp): the pool
# lets them go and the buffer is made on a second try, on the device, with no warning.
POOLED = {"vkCreateBuffer", "vkAllocateMemory", "vkBindBufferMemory", "vkMapMemory"}


def run(lib, layer_dir, fault, report):
    env = dict(os.environ, VKGEMM_BLAS_THRESHOLD="0", VKGEMM_FAULT=fault, VKGEMM_FAULT_REPORT=report,
               VK_ADD_LAYER_PATH=":".join(v for v in (layer_dir, os.environ.get("VK_ADD_LAYER_PATH")) if v),
               VK_INSTANCE_LAYERS=":".join(v for v in ("VK_LAYER_VKGEMM_fault", os.environ.get("VK_INSTANCE_LAYERS"))
                                           if v))
    env.pop("VKGEMM_BLAS_VALIDATION", None)
    p = subprocess.run(["/usr/bin/python3", "-c", "import numpy\n" + CHILD, lib, "1127"], env=env,
                       capture_output=True, text=True, timeout=300)
    with open(report) as f:
        lines = f.read().splitlines()
    fields = dict(line.split(" ", 1) for line in lines[:3])
    return p, int(fields["injected"]), fields["failed"], lines[3:]


def main():
    lib, layer_dir = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report")
        p, _, _, trace = run(lib, layer_dir, "0:none", report)
        assert p.returncode == 0 and "vkgemm-blas:" not in p.stderr, f"the unfailed run: {p.stdout}{p.stderr}"
        counts = {"fell back": 0, "absorbed": 0, "not reached": 0}
        for n, function in enumerate(trace, 1):
            results = [-2] if function in DEVICE_ONLY else [-1 if n % 2 else -2]
            results += [-4] if function in LOST else []
            results += [-5] if function == "vkMapMemory" else []
            for r in results:
                where = f"call {n} ({function}) failed with {RESULTS[r]}"
                p, injected, failed, _ = run(lib, layer_dir, f"{n}:{RESULTS[r]}:{function}", report)
                out = p.stdout + p.stderr
                assert p.returncode == 0 and "two products right" in p.stdout, f"{where}: {out}"
                warnings = [line for line in p.stderr.splitlines() if line.startswith("vkgemm-blas:")]
                if not injected:  # a wait's polls vary with timing: call n was another function this time
                    assert not warnings, f"{where}: not reached, yet {warnings}"
                    counts["not reached"] += 1
                    continue
                assert failed == function, f"{where}: {failed} failed instead"
                if not warnings and function in POOLED and r in (-1, -2):
                    counts["absorbed"] += 1  # the pool released its buffers, the second try made the buffer
                    continue
                assert len(warnings) == 1, f"{where}: {len(warnings)} warnings, not one: {out}"
                assert function in warnings[0] and RESULTS[r] in warnings[0], f"{where}: {warnings[0]}"
                counts["fell back"] += 1
        print(f"drop-in faults: {len(trace)} calls walked, {sum(counts.values())} processes: "
              f"{counts['fell back']} fell back with one warning naming the call, {counts['absorbed']} absorbed by "
              f"the buffer pool's second try, {counts['not reached']} not reached")
        assert counts["fell back"] > 0


if __name__ == "__main__":
    main()
