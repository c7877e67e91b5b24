#!/usr/bin/env bash
# NumPy's a @ b on the GPU through vkgemm, the two ways in: the drop-in BLAS preloaded (LD_PRELOAD, no change
# to the program) and the Python module (vkgemm.matmul). 4096^2 float32 and float64, each verified against
# NumPy's own product on the CPU (within (k + 2) u |A||B|), timed with the copies (wall time of the call) and
# without (the module's GPU time); beside them NumPy on the CPU and, where PyTorch has CUDA, cuBLAS (with and
# without the copies). Then the crossover for the threshold: the preloaded product's wall time against the
# CPU's at 256 ... 4096 (float32).
# Run from the repository root with build/release present (its lib/ and python/ are built by default) and the
# Vulkan loader loadable (as for build/release/vkgemm devices). Results: $OUT/blas-numpy.json and .txt.
# Usage: tools/gpu/run.sh blas-numpy [python3]
#   BLAS_NUMPY_N (default 4096), BLAS_NUMPY_LARGE (default 8192: float32 only) and BLAS_NUMPY_CROSSOVER
#   (default "256 512 1024 2048"): a dry run on lavapipe takes BLAS_NUMPY_N=256 BLAS_NUMPY_LARGE=384
#   BLAS_NUMPY_CROSSOVER="64 128" VKGEMM_BLAS_THRESHOLD=0 (the default threshold routes 4096^2 but not 256^2).
#   Each preloaded product runs twice: cut into panels where the engine's rule cuts it (the default), and
#   whole (VKGEMM_TEST_HOST_PANELS=none): what the copies beside the products gain; and staged by the host's
#   copy threads instead of imported (VKGEMM_TEST_HOST_COPIES=staging). Then three chained
#   float32 products on vkgemm.Array at BLAS_NUMPY_N: their wall time over their GPU time plus the one upload
#   and the one download (array_chain_f32.ratio; the host-array issue's bar is 1.2). Passes when both ways match NumPy's CPU product and the preloaded one ran on the device.
#
# What it assumes of the GPU host (Python 3.12, NumPy and PyTorch from pip, no Debian libblas):
# - NumPy's pip wheels call their bundled OpenBLAS under suffixed ILP64 names (scipy_cblas_sgemm64_ in NumPy 2,
#   cblas_sgemm64_ in 1.26), which the library exports too; the names NumPy imports are printed first, so a
#   wheel that calls something else shows here as "0 GEMMs on the device".
# - The CPU BLAS underneath is that same OpenBLAS, found among the loaded objects; the run with
#   VKGEMM_BLAS_CPU names its file (numpy.libs/ or the scipy_openblas64 package) to test the variable too.
set -uo pipefail
cd "$(dirname "$0")/../../.."
out=${OUT:-out/gpu}
mkdir -p "$out"
py=${1:-python3}
lib=$(realpath build/release/lib/libvkgemm_blas.so.0)
export PYTHONPATH=$PWD/build/release/python${PYTHONPATH:+:$PYTHONPATH}

"$py" - "$lib" "$out" <<'PY' 2>&1 | tee "$out/blas-numpy.txt"
import glob, json, os, re, subprocess, sys, time
import numpy as np

lib, out = sys.argv[1], sys.argv[2]
results = {"numpy": np.__version__, "python": sys.version.split()[0]}
umath = (getattr(np, "_core", None) or np.core)._multiarray_umath.__file__  # NumPy 2 renamed core to _core
names = sorted(set(re.findall(rb"[a-z_]*cblas_[sd]gemm[a-z0-9_]*", open(umath, "rb").read())))
results["numpy_gemm_symbols"] = [n.decode() for n in names]
print("NumPy", np.__version__, "imports", results["numpy_gemm_symbols"])
site = os.path.dirname(os.path.dirname(np.__file__))
openblas = sorted(glob.glob(os.path.join(site, "numpy.libs", "*openblas*.so*")) +
                  glob.glob(os.path.join(site, "scipy_openblas*", "lib", "*.so*")))
print("bundled OpenBLAS:", openblas)

CHILD = r'''
import json, sys, time
import numpy as np
n, dtype, reps = int(sys.argv[1]), np.dtype(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(n)
a = rng.uniform(-1, 1, (n, n)).astype(dtype)
b = rng.uniform(-1, 1, (n, n)).astype(dtype)
c = a @ b  # the first call (engine created, pipelines built): not timed
times = []
for _ in range(reps):
    t = time.perf_counter(); c = a @ b; times.append(time.perf_counter() - t)
np.save(sys.argv[4], c)
print(json.dumps({"median_s": sorted(times)[len(times) // 2], "times_s": times}))
'''

def run_numpy(n, dtype, reps, env, tag):
    path = os.path.join(out, f"c-{tag}-{dtype}-{n}.npy")
    p = subprocess.run([sys.executable, "-c", CHILD, str(n), dtype, str(reps), path], env=dict(os.environ, **env),
                       capture_output=True, text=True, timeout=900)
    line = [l for l in p.stdout.splitlines() if l.startswith("{")]
    routed = re.search(r"(\d+) GEMMs on the device.*?(\d+) on the CPU BLAS, (\d+) fell back", p.stderr)
    r = json.loads(line[-1]) if line else {"error": p.stdout[-2000:] + p.stderr[-2000:]}
    r["vkgemm_blas"] = routed.group(0) if routed else None
    if p.stderr.strip():
        print(p.stderr.strip()[-1500:])
    return r, path

def check(c, ref_path, a_abs_b_abs, n, dtype):
    ref = np.load(ref_path).astype(np.float64)
    u = np.finfo(dtype).eps / 2
    err = np.abs(c.astype(np.float64) - ref)
    # Both are computed products: each within (k + 2) u |A||B| of the exact one.
    ok = bool((err <= 2 * (n + 2) * u * a_abs_b_abs).all())
    return ok, float(err.max())

preload = {"LD_PRELOAD": lib, "VKGEMM_BLAS_VERBOSE": "1"}
for dtype in ("float32", "float64"):
    n = int(os.environ.get("BLAS_NUMPY_N", "4096"))
    rng = np.random.default_rng(n)
    a = rng.uniform(-1, 1, (n, n)).astype(dtype)
    b = rng.uniform(-1, 1, (n, n)).astype(dtype)
    mag = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    cpu, cpu_path = run_numpy(n, dtype, 3, {}, "cpu")
    dev, dev_path = run_numpy(n, dtype, 5, preload, "preload")
    row = {"cpu": cpu, "preload": dev}
    if os.path.exists(dev_path):
        row["preload_matches_cpu"], row["preload_max_err"] = check(np.load(dev_path), cpu_path, mag, n, dtype)
    # The same without panels (the whole copies, then the product): what cutting into panels gains.
    row["preload_whole"], _ = run_numpy(n, dtype, 5, dict(preload, VKGEMM_TEST_HOST_PANELS="none"), "preload-whole")
    # Staged through the host's copy threads instead of imported (no pinning a call), each verified.
    row["preload_staged"], staged_path = run_numpy(n, dtype, 5, dict(preload, VKGEMM_TEST_HOST_COPIES="staging"),
                                                   "preload-staged")
    if os.path.exists(staged_path):
        row["preload_staged_matches_cpu"], _ = check(np.load(staged_path), cpu_path, mag, n, dtype)
    if openblas:
        named, _ = run_numpy(n, dtype, 2, dict(preload, VKGEMM_BLAS_CPU=openblas[0], VKGEMM_BLAS_THRESHOLD="never"),
                             "cpu-named")
        row["preload_threshold_never_cpu_named"] = named
    # The module: wall time with the copies, GPU time without.
    import vkgemm
    e = vkgemm.Engine()
    row["device"] = e.device.name
    e.matmul(a, b)
    walls, gpus = [], []
    for _ in range(5):
        t = time.perf_counter(); c, tm = e.matmul(a, b, timing=True); walls.append(time.perf_counter() - t)
        gpus.append(tm.gpu_ms)
    row["module"] = {"median_wall_s": sorted(walls)[2], "median_gpu_ms": sorted(gpus)[2], "kernel": tm.kernel,
                     "config": tm.config, "upload_ms": tm.upload_ms, "download_ms": tm.download_ms}
    row["module_matches_cpu"], row["module_max_err"] = check(c, cpu_path, mag, n, dtype)
    e.close()
    try:
        import torch
        if torch.cuda.is_available():
            ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
            torch.matmul(ta, tb); torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record(); torch.matmul(ta, tb); end.record(); torch.cuda.synchronize()
            t = time.perf_counter(); torch.matmul(torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()).cpu()
            row["cublas"] = {"gpu_ms": start.elapsed_time(end), "wall_with_copies_s": time.perf_counter() - t}
    except ImportError:
        pass
    results[dtype] = row
    print(dtype, json.dumps(row, indent=1))

# A larger f32 product, with and without panels, checked against NumPy's CPU product.
for n in map(int, os.environ.get("BLAS_NUMPY_LARGE", "8192").split()):
    rng = np.random.default_rng(n)
    a = rng.uniform(-1, 1, (n, n)).astype("float32")
    b = rng.uniform(-1, 1, (n, n)).astype("float32")
    mag = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    cpu, cpu_path = run_numpy(n, "float32", 1, {}, "cpu")
    row = {"cpu": cpu}
    for tag, env in (("preload", preload), ("preload_whole", dict(preload, VKGEMM_TEST_HOST_PANELS="none")),
                     ("preload_staged", dict(preload, VKGEMM_TEST_HOST_COPIES="staging"))):
        row[tag], path = run_numpy(n, "float32", 3, env, tag)
        if os.path.exists(path):
            row[tag + "_matches_cpu"], row[tag + "_max_err"] = check(np.load(path), cpu_path, mag, n, "float32")
    results[f"float32_{n}"] = row
    print(n, json.dumps(row, indent=1))

# Three chained float32 products on vkgemm.Array (the operands uploaded once, the last result downloaded once):
# their wall time against their GPU time plus that one upload and one download, each checked against float64.
import vkgemm
n = int(os.environ.get("BLAS_NUMPY_N", "4096"))
rng = np.random.default_rng(n + 1)
a = rng.uniform(-1, 1, (n, n)).astype("float32")
b = (rng.uniform(-1, 1, (n, n)) / np.sqrt(n)).astype("float32")  # scaled: the chain's values stay near 1
with vkgemm.Engine() as e:
    e.matmul(e.asarray(a), e.asarray(b))  # pipelines built, buffers made: not timed
    t0 = time.perf_counter(); da, db = e.asarray(a), e.asarray(b); t1 = time.perf_counter()
    gpu = 0.0
    c = da
    for _ in range(3):
        c, tm = e.matmul(c, db, timing=True)
        gpu += tm.gpu_ms or 0.0
    t2 = time.perf_counter(); host = c.numpy(); t3 = time.perf_counter()
ref = a.astype(np.float64)
for _ in range(3):
    ref = ref @ b.astype(np.float64)
bound = 3 * (n + 2) * np.finfo(np.float32).eps / 2 * 4 * np.abs(ref).max()  # three steps' sums, loosely
chain = {"n": n, "upload_s": t1 - t0, "products_s": t2 - t1, "download_s": t3 - t2, "gpu_ms": gpu,
         "max_err": float(np.abs(host - ref).max()), "ok": bool(np.abs(host - ref).max() <= bound)}
chain["ratio"] = (t3 - t0) / (t1 - t0 + gpu * 1e-3 + t3 - t2)
results["array_chain_f32"] = chain
print("array chain", json.dumps(chain))

results["crossover_f32"] = {}
for n in map(int, os.environ.get("BLAS_NUMPY_CROSSOVER", "256 512 1024 2048").split()):
    cpu, _ = run_numpy(n, "float32", 5, {}, "cpu")
    dev, _ = run_numpy(n, "float32", 5, dict(preload, VKGEMM_BLAS_THRESHOLD="0"), "preload")
    results["crossover_f32"][n] = {"cpu_s": cpu.get("median_s"), "preload_s": dev.get("median_s"),
                                   "routed": dev.get("vkgemm_blas")}
    print(n, results["crossover_f32"][n])
for f in glob.glob(os.path.join(out, "c-*.npy")):
    os.remove(f)
tmp = os.path.join(out, f".blas-numpy.{os.getpid()}.json")
with open(tmp, "w") as fh:
    json.dump(results, fh, indent=1)
os.replace(tmp, os.path.join(out, "blas-numpy.json"))
def routed(r):
    m = re.match(r"(\d+) GEMMs on the device", r.get("vkgemm_blas") or "")
    return bool(m and int(m.group(1)) > 0)
ok = all(results[d].get("preload_matches_cpu") and results[d].get("preload_staged_matches_cpu") and
         results[d].get("module_matches_cpu") and routed(results[d]["preload"]) for d in ("float32", "float64"))
ok = ok and results["array_chain_f32"]["ok"]
print("blas-numpy:", "passed" if ok else "FAILED")
sys.exit(0 if ok else 1)
PY
