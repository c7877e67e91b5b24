#!/usr/bin/python3
"""tools/gpu/sets/bench-vs-cublas.py --epilogue bias-gelu, end to end on this machine's Vulkan device with a
stand-in for PyTorch (no CUDA here): vkgemm runs the product with the fused bias and GELU (verified), the
cuBLAS side calls torch._addmm_activation with a bias of n elements and use_gelu=True, and each row names its
epilogue and method; without --epilogue the rows say none and the cuBLAS side calls matmul. Requests the
epilogue cannot take (f64, column-major, a batch, the set's cases) are refused before any work, naming them."""
import json
import os
import subprocess
import sys
import tempfile

SOURCE = os.environ.get("VKGEMM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), ".."))
TOOL = os.path.join(SOURCE, "tools", "gpu", "sets", "bench-vs-cublas.py")
BINARY = os.environ.get("VKGEMM_BINARY", "build/release/vkgemm")

# The stand-in: what bench-vs-cublas touches, each product 0.25 ms of simulated GPU time, the calls logged.
STUB = '''
import json, os
float32, float64, float16, bfloat16, int8 = "float32", "float64", "float16", "bfloat16", "int8"
_clock = [0.0]
_log = os.environ["STUB_TORCH_LOG"]

def _note(name, **what):
    _clock[0] += 0.25
    with open(_log, "a") as f:
        f.write(json.dumps(dict(call=name, **what)) + "\\n")

class Tensor:
    def __init__(self, shape):
        self.shape = tuple(shape)
    def __mul__(self, other):
        return self
    def __sub__(self, other):
        return self
    def transpose(self, a, b):
        s = list(self.shape)
        s[a], s[b] = s[b], s[a]
        return Tensor(s)

def rand(shape, device=None, dtype=None):
    return Tensor(shape if isinstance(shape, tuple) else (shape,))

def empty(shape, device=None, dtype=None):
    return Tensor(shape)

def matmul(a, b, out=None):
    _note("matmul", a=a.shape, b=b.shape)

def _addmm_activation(bias, a, b, use_gelu=False):
    _note("_addmm_activation", bias=bias.shape, a=a.shape, b=b.shape, use_gelu=use_gelu)

class _Namespace:
    pass

backends = _Namespace()
backends.cuda = _Namespace()
backends.cuda.matmul = _Namespace()
backends.cudnn = _Namespace()

class Event:
    def __init__(self, enable_timing=False):
        self.at = 0.0
    def record(self):
        self.at = _clock[0]
    def synchronize(self):
        pass
    def elapsed_time(self, end):
        return end.at - self.at

cuda = _Namespace()
cuda.Event = Event
cuda.is_available = lambda: True
cuda.get_device_name = lambda index: "stand-in"
'''


def run(folder, extra):
    out = os.path.join(folder, "rows.json")
    env = dict(os.environ, PYTHONPATH=folder, STUB_TORCH_LOG=os.path.join(folder, "calls.jsonl"))
    done = subprocess.run([sys.executable, TOOL, "--vkgemm", BINARY, "--type", "f32", "--shapes", "64x48x40",
                           "--rounds", "1", "--repeat", "20", "--warmup-ms", "1", "--json", out, *extra],
                          capture_output=True, text=True, env=env)
    rows = json.load(open(out))["rows"] if done.returncode == 0 else None
    return done.returncode, done.stdout + done.stderr, rows


def calls(folder):
    path = os.path.join(folder, "calls.jsonl")
    found = [json.loads(line) for line in open(path)]
    os.unlink(path)
    return found


def main():
    with tempfile.TemporaryDirectory() as folder:
        os.mkdir(os.path.join(folder, "torch"))
        with open(os.path.join(folder, "torch", "__init__.py"), "w") as f:
            f.write(STUB)
        code, text, rows = run(folder, ["--epilogue", "bias-gelu"])
        assert code == 0, text
        (row,) = rows
        assert row["epilogue"] == "bias col, gelu-tanh" and "_addmm_activation" in row["cublas_method"], row
        assert row["verified"] is True and (row["m"], row["n"], row["k"]) == (64, 48, 40), row
        made = calls(folder)
        assert made and all(c["call"] == "_addmm_activation" and c["use_gelu"] and c["bias"] == [48] for c in made), made[:3]
        assert all(c["a"] == [64, 40] and c["b"] == [40, 48] for c in made), made[:3]
        code, text, rows = run(folder, [])
        assert code == 0, text
        assert rows[0]["epilogue"] is None and rows[0]["cublas_method"] == "burst", rows[0]
        assert {c["call"] for c in calls(folder)} == {"matmul"}
        for extra, words in ((["--epilogue", "bias-gelu", "--type", "f64"], "not --type f64"),
                             (["--epilogue", "bias-gelu", "--layout", "col"], "--layout col"),
                             (["--epilogue", "bias-gelu", "--batch", "2"], "--batch 2")):
            code, text, _ = run(folder, extra)
            assert code != 0 and words in text, (extra, code, text)
            assert not os.path.exists(os.path.join(folder, "calls.jsonl")), f"{extra}: work began before the refusal"
        env = dict(os.environ, PYTHONPATH=folder)
        done = subprocess.run([sys.executable, TOOL, "--epilogue", "bias-gelu"], capture_output=True, text=True, env=env)
        assert done.returncode != 0 and "takes --shapes" in done.stderr, done.stderr
    print("bench-vs-cublas --epilogue: the fused rows, the plain rows and the refusals as expected")


if __name__ == "__main__":
    main()
