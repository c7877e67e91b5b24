#!/usr/bin/python3
"""vkgemm bench and tools/vkgemm-report end to end, on the default device (lavapipe here) under validation.

A tiny sweep that yields every status but `failed` (test_bench.cpp makes a product wrong and checks that):
its JSON must follow docs/bench.schema.json and agree with itself, its CSV and table must hold the same
cases, and the report must turn it into non-empty PNG and SVG pictures and a Markdown table, for one
device and for two side by side. Run by CTest with VKGEMM_BINARY and VKGEMM_SOURCE_DIR set.
"""
import copy
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import jsonschema

BINARY = os.environ["VKGEMM_BINARY"]
SOURCE = Path(os.environ["VKGEMM_SOURCE_DIR"])
REPORT = SOURCE / "tools" / "vkgemm-report"
SCHEMA = json.loads((SOURCE / "docs" / "bench.schema.json").read_text())
ENV = dict(os.environ, VKGEMM_VALIDATION="1")  # any validation message makes vkgemm exit 3

# 16^3 and 33*17*9 are checked against the full reference; 32^3 is above --verify-max, so by the sampled
# check; tile 64 is more
# invocations than lavapipe (and most GPUs) allow, so those cases are skipped. The steadiness tolerance is
# wide, so the statuses do not hang on how busy the machine is (test_bench.cpp tests the rule itself).
SWEEP = ["--steady-tolerance", "1000", "--sizes", "16,32", "--shapes", "33x17x9", "--types", "all", "--kernels", "all", "--tiles", "8,64",
         "--repeat", "3", "--warmup", "1", "--verify-max", "20000", "--latency-sizes", "16", "--latency-calls", "5",
         "--host-sizes", "24", "--seed", "12345"]


def run(*args):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, env=ENV, timeout=600)


class BenchAndReport(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory(prefix="vkgemm-bench-test-")
        cls.tmp = Path(cls.dir.name)
        cls.json_path, cls.csv_path = cls.tmp / "result.json", cls.tmp / "result.csv"
        cls.bench = run(BINARY, "bench", *SWEEP, "--json", cls.json_path, "--csv", cls.csv_path)
        if cls.bench.returncode != 0:
            raise AssertionError(f"vkgemm bench exited {cls.bench.returncode}:\n{cls.bench.stdout}\n{cls.bench.stderr}")
        cls.doc = json.loads(cls.json_path.read_text())

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def validator(self):
        return jsonschema.Draft202012Validator(SCHEMA)

    def test_json_follows_the_schema_and_agrees_with_itself(self):
        jsonschema.Draft202012Validator.check_schema(SCHEMA)
        self.validator().validate(self.doc)
        doc = self.doc
        self.assertTrue(doc["complete"])
        self.assertRegex(doc["vkgemm"]["commit"], r"^([0-9a-f]{4,40}(-dirty)?|unknown)$")
        self.assertTrue(doc["device"]["name"])
        self.assertEqual(doc["settings"]["seed"], "12345")
        # The warm-up rule: none on a CPU device, 200 ms of device time on a GPU.
        self.assertEqual(doc["settings"]["warmup_ms"], 0 if doc["device"]["type"] == "CPU" else 200)
        self.assertEqual(doc["settings"]["steady_tolerance_pct"], 1000)
        # The steadiness checks: the reference at the start and one at the end at least, each segment judged.
        steady = doc["steadiness"]
        self.assertRegex(steady["product"], r"^f32 \d+x\d+x\d+ auto \(")
        self.assertGreaterEqual(len(steady["checks"]), 2)
        self.assertEqual(steady["checks"][0]["at_s"] < steady["checks"][-1]["at_s"], True)
        self.assertEqual(len(steady["segments"]), len(steady["checks"]) - 1)
        self.assertEqual((steady["verdict"], steady["unsteady_cases"]), ("steady", 0))
        for c in doc["cases"] + doc["latency"]:
            self.assertLess(c["segment"], len(steady["segments"]))
        # naive and tiled run once per tile (8 and 64); blocked, gemv, thin, coopmat, coopmat2 and ozaki once each,
        # as the engine
        # configures them ("all" is every kernel). Kernel x type pairs the device can never run are not cases:
        # the blocked kernel takes f32 and f64, the cooperative-matrix kernels f16 where the device has them.
        types = ["f32", "i32", "f64", "f16", "bf16", "i8", "u8"]  # bench's "all"
        configs_per_kernel = {"naive": 2, "tiled": 2, "blocked": 1, "gemv": 1, "thin": 1, "coopmat": 1, "coopmat2": 1,
                              "ozaki": 1}
        never = {(n["kernel"], n["type"]) for n in doc["not_applicable"]}
        for pair in [("blocked", "i32"), ("blocked", "f16"), ("coopmat", "f32"), ("coopmat2", "f64"), ("ozaki", "f16")]:
            self.assertIn(pair, never)
        self.assertNotIn(("naive", "f32"), never)
        for n in doc["not_applicable"]:
            self.assertTrue(n["reason"])
        pairs = [(k, t) for k in configs_per_kernel for t in types if (k, t) not in never]
        self.assertEqual(len(doc["cases"]), 3 * sum(configs_per_kernel[k] for k, _ in pairs))
        self.assertEqual(len(doc["latency"]), len(pairs))
        # The host-memory cases (--host-sizes 24): one per latency case's pair, checked and timed by the host's
        # clock where the device runs the pair, the bytes of A and B in and C out.
        self.assertEqual(len(doc["host_products"]), len(pairs))
        for h in doc["host_products"]:
            with self.subTest(host=(h["type"], h["kernel"])):
                self.assertIn(h["status"], ("passed", "skipped"))
                if h["status"] == "passed":
                    self.assertEqual(h["wall_time"]["count"], 3)
                    self.assertGreater(h["copy_gbps"], 0)
                    self.assertGreater(h["bytes"], 0)
                    self.assertTrue(h["verification"]["passed"])
        self.assertIn("host-memory products:", self.bench.stdout)
        for c in doc["cases"] + doc["latency"]:
            self.assertNotIn((c["kernel"], c["type"]), never)
        self.assertEqual(len({c["seed"] for c in doc["cases"] + doc["latency"]}), len(doc["cases"]) + len(doc["latency"]))
        for c in doc["cases"]:
            shape = (c["m"], c["n"], c["k"])
            with self.subTest(shape=shape, type=c["type"], kernel=c["kernel"], config=c["config"]):
                if c["options"]["tile"] == 64 and c["kernel"] != "blocked":
                    self.assertEqual(c["status"], "skipped")
                    self.assertIn("maxComputeWorkGroupInvocations", c["reason"])
                    continue
                if c["kernel"] in ("coopmat", "coopmat2") and c["status"] == "skipped":
                    self.assertRegex(c["reason"], "f16|cooperative_matrix")  # a shape or tile the device lacks
                    continue
                self.assertEqual(c["status"], "passed")
                self.assertEqual(c["verification"]["method"], "sampled" if shape == (32, 32, 32) else "full")
                if shape == (32, 32, 32):
                    sampled = c["verification"]["sampled"]
                    self.assertGreater(sampled["witnesses"], 0)
                    self.assertEqual(sampled["elements"], 32 * 32)
                # What ran: the kernel asked for, the default configuration resolved to a concrete one.
                self.assertTrue(c["ran"].startswith(c["kernel"] + " "), c["ran"])
                if c["kernel"] == "blocked":
                    self.assertRegex(c["ran"], r"^blocked \d+x\d+x\d+ \d+x\d+ lanes \d+ split \d+")
                self.assertEqual(c["warmup"]["busy_ms"] > 0, doc["settings"]["warmup_ms"] > 0)
                t = c["gpu_time"]
                self.assertEqual(t["count"], 3)
                self.assertEqual(len(t["samples"]), 3)
                self.assertLessEqual(t["min"], t["median"])
                self.assertLessEqual(t["median"], t["max"])
                self.assertAlmostEqual(c["gflops"], 2 * c["m"] * c["n"] * c["k"] / t["median"] * 1e-6, delta=1e-9 * c["gflops"])
                # No --peak-gflops: f32, f16, f64 and bf16 cases against the ceilings measured before the sweep
                # (f64 against f64 FMA; bf16 on the SIMT kernels, which sum in fp32, against f32 FMA); i8 and u8
                # on tiled through packed dot products against the int8 dot row; the other integer cases have none.
                # The ozaki kernel's against its emulated row, which vkgemm peak derives from an int8 matrix row:
                # none where the device has no int8 matrix units (lavapipe), never the FMA rows.
                ceilings = doc["settings"]["ceilings"]
                packed_dot = c["type"] in ("i8", "u8") and "packed dot products" in c["ran"]
                if packed_dot:
                    self.assertEqual(c["efficiency_ceiling"], "int8 dot product (packed)")
                has_ceiling = c["type"] in ("f32", "f16", "f64", "bf16") or packed_dot
                if c["kernel"] == "ozaki":
                    emulated = f"{c['type']} emulated (ozaki)"
                    has_ceiling = emulated in ceilings
                    if has_ceiling:
                        self.assertEqual(c["efficiency_ceiling"], emulated)
                if has_ceiling:
                    self.assertIn(c["efficiency_ceiling"], ceilings)
                    self.assertAlmostEqual(c["efficiency"], c["gflops"] / ceilings[c["efficiency_ceiling"]],
                                           delta=1e-9 * c["efficiency"])
                else:
                    self.assertIsNone(c["efficiency"])
                    self.assertIsNone(c["efficiency_ceiling"])
                # The roofline: the lesser of that ceiling and the bytes (A, B read once, C written once: beta 0)
                # at the copy rate measured with the ceilings, and the fraction of it reached.
                sizes = {"f32": 4, "f64": 8, "i32": 4, "f16": 2, "bf16": 2, "i8": 1, "u8": 1}
                out = {"f16": 4, "bf16": 4, "i8": 4, "u8": 4}.get(c["type"], sizes[c["type"]])
                m, n, k = shape
                nbytes = sizes[c["type"]] * (m * k + k * n) + out * m * n
                r, copy_gbps = c["roofline"], doc["settings"]["copy_gbps"]
                self.assertIsNotNone(copy_gbps)
                self.assertAlmostEqual(r["bytes"], nbytes, delta=1e-9 * nbytes)
                memory = 2 * m * n * k * copy_gbps / nbytes
                self.assertAlmostEqual(r["memory_gflops"], memory, delta=1e-9 * memory)
                compute = ceilings.get(c["efficiency_ceiling"]) if c["efficiency_ceiling"] else None
                self.assertAlmostEqual(r["gflops"], memory if compute is None else min(compute, memory),
                                       delta=1e-9 * r["gflops"])
                self.assertEqual(r["bound"], "memory" if compute is None or memory < compute else "compute")
                self.assertAlmostEqual(r["fraction"], c["gflops"] / r["gflops"], delta=1e-9 * r["fraction"])
        for l in doc["latency"]:
            if l["kernel"] in ("coopmat", "coopmat2") and l["status"] == "skipped":
                continue  # as above
            self.assertEqual(l["status"], "passed")
            self.assertTrue(l["verification"]["passed"])
            self.assertEqual(l["wall_time"]["count"], 5)
            self.assertEqual(l["warmup"]["busy_ms"] > 0, doc["settings"]["warmup_ms"] > 0)

    def test_schema_holds_cases_to_their_status(self):
        v = self.validator()
        timed = next(c for c in self.doc["cases"] if c["status"] == "passed")
        doc = copy.deepcopy(self.doc)
        case = doc["cases"][self.doc["cases"].index(timed)]
        case.update(status="failed", reason="1 elements differ")
        case["verification"]["passed"] = False
        self.assertFalse(v.is_valid(doc), "a failed case that was timed must not validate")
        case.update(gpu_time=None, gflops=None, gflops_best=None, efficiency=None, efficiency_ceiling=None,
                    roofline=None)
        self.assertTrue(v.is_valid(doc), list(v.iter_errors(doc)))
        case["status"] = "passed"
        self.assertFalse(v.is_valid(doc), "a passed case needs a passing check and times")
        # unsteady: timed, with a reason; its check, where one was made, passed.
        doc = copy.deepcopy(self.doc)
        case = doc["cases"][self.doc["cases"].index(timed)]
        case.update(status="unsteady", reason="the device's speed drifted")
        self.assertTrue(v.is_valid(doc), list(v.iter_errors(doc)))
        case["reason"] = ""
        self.assertFalse(v.is_valid(doc), "an unsteady case says why")
        case.update(reason="drifted", gpu_time=None, gflops=None, gflops_best=None)
        self.assertFalse(v.is_valid(doc), "an unsteady case was timed")
        doc = copy.deepcopy(self.doc)
        doc["steadiness"]["verdict"] = "fine"
        self.assertFalse(v.is_valid(doc))
        broken = copy.deepcopy(self.doc)
        del broken["device"]["driver_version"]
        self.assertFalse(v.is_valid(broken))

    def test_csv_holds_the_same_cases(self):
        with open(self.csv_path, newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), len(self.doc["cases"]) + len(self.doc["latency"]) + len(self.doc["host_products"]))
        for row, case in zip(rows, self.doc["cases"]):
            self.assertEqual(row["kind"], "throughput")
            self.assertEqual(row["device"], self.doc["device"]["name"])  # a name with a comma, quoted
            self.assertEqual((int(row["m"]), row["type"], row["config"], row["status"]),
                             (case["m"], case["type"], case["config"], case["status"]))
            if case["gflops"] is not None:
                self.assertAlmostEqual(float(row["gflops"]), case["gflops"], delta=1e-6 * case["gflops"])
        self.assertEqual({r["kind"] for r in rows[len(self.doc["cases"]):]}, {"latency", "host"})

    def test_table_on_stdout_progress_on_stderr(self):
        out, err = self.bench.stdout, self.bench.stderr
        self.assertIn("seed 12345", out)
        self.assertIn("GFLOP/s", out)
        self.assertIn(" sampled", out)  # 32^3's check
        self.assertRegex(out, r"\d+ passed, 0 unverified")
        self.assertIn("end-to-end latency", out)
        self.assertIn("skipped", out)
        self.assertRegex(out, r"steadiness: \d+ checks of f32 .*: steady")
        self.assertIn("\nnot run:", out)  # the pairs never run, named once, in the header
        self.assertRegex(out, r"\n(not run:)? +blocked with i32, f16, bf16, i8, u8: ")
        self.assertEqual(out.count("blocked with i32"), 1)
        self.assertIn("summary: the fastest kernel at each size", out)
        self.assertIn("roofline: each case's ceiling is the lesser", out)
        self.assertRegex(out, r"of its roofline \((memory|compute) bound\)")
        self.assertRegex(out, r"noisy: ")
        total = len(self.doc["cases"]) + len(self.doc["latency"]) + len(self.doc["host_products"])
        self.assertIn(f"{total}/{total} cases done", err)
        self.assertNotIn("GFLOP/s", err)

    def check_pictures(self, out, stems):
        for stem in stems:
            png, svg = out / f"{stem}.png", out / f"{stem}.svg"
            self.assertTrue(png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n"), png)
            self.assertGreater(png.stat().st_size, 10000, png)
            text = svg.read_text()
            self.assertIn("<svg", text)
            self.assertIn("</svg>", text)

    def test_report_one_device(self):
        out = self.tmp / "report-one"
        r = run(REPORT, self.json_path, "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.check_pictures(out, ["gflops"])
        self.assertFalse((out / "compare.png").exists())
        md = (out / "report.md").read_text()
        self.assertIn(self.doc["device"]["name"], md)
        self.assertIn("| 33×17×9 | f32 | naive | tile 8 | passed |", md)
        self.assertIn("| efficiency | roofline | check |", md)
        self.assertRegex(md, r"\| \d+\.\d% \((memory|compute)\) \|")
        self.assertIn("(sampled)", md)
        self.assertIn("the sampled check above", md)
        self.assertIn("maxComputeWorkGroupInvocations", md)
        self.assertIn("End-to-end latency", md)
        self.assertIn("Host-memory products", md)

    def test_report_devices_side_by_side(self):
        other = copy.deepcopy(self.doc)
        other["device"]["name"] = "Another GPU"
        other_path = self.tmp / "other.json"
        other_path.write_text(json.dumps(other))
        out = self.tmp / "report-two"
        r = run(REPORT, self.json_path, other_path, "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.check_pictures(out, ["gflops", "compare"])
        md = (out / "report.md").read_text()
        self.assertIn("## Side by side", md)
        self.assertIn("Another GPU", md)

    def test_report_refuses_bad_files(self):
        junk = self.tmp / "junk.json"
        junk.write_text("{ not json")
        wrong = self.tmp / "wrong.json"
        doc = copy.deepcopy(self.doc)
        doc["cases"][0]["status"] = "great"
        wrong.write_text(json.dumps(doc))
        for path, words in [(junk, "is not JSON"), (wrong, "does not follow bench.schema.json at cases/0"),
                            (self.tmp / "missing.json", "cannot read")]:
            r = run(REPORT, path, "--out", self.tmp / "never")
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(words, r.stderr)
        self.assertFalse((self.tmp / "never").exists())

    def report(self, *files, out, extra=()):
        r = run(REPORT, *files, "--out", out, *extra)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r, (out / "report.md").read_text()

    def write(self, name, doc):
        path = self.tmp / name
        path.write_text(json.dumps(doc))
        return path

    def test_report_says_when_one_device_is_given(self):
        r, _ = self.report(self.json_path, out=self.tmp / "report-alone")
        self.assertIn("one device given", r.stderr)
        other = copy.deepcopy(self.doc)
        other["device"]["name"] = "Another GPU"
        r, _ = self.report(self.json_path, self.write("another.json", other), out=self.tmp / "report-pair")
        self.assertNotIn("one device given", r.stderr)

    def test_report_keeps_two_runs_of_one_device_apart(self):
        later = copy.deepcopy(self.doc)
        later["date"] = "2030-01-02T03:04:05Z"
        for c in later["cases"]:
            if c["gflops"] is not None:
                c["gflops"] *= 2  # a second run, twice as fast: never merged with the first, never dropped
        r, md = self.report(self.json_path, self.write("later.json", later), out=self.tmp / "report-runs")
        self.assertIn("kept apart", r.stderr)
        name = self.doc["device"]["name"]
        first, second = f"{name} ({self.doc['date'][:16]})", f"{name} (2030-01-02T03:04)"
        self.assertIn(f"| n×n×n | type | {first} | {second} |", md)
        self.assertIn(f"## {first}", md)
        self.assertIn(f"## {second}", md)
        self.check_pictures(self.tmp / "report-runs", ["gflops", "compare"])

    def test_report_labels_any_number_of_devices(self):
        files = []
        for i in range(3):
            doc = copy.deepcopy(self.doc)
            doc["device"]["name"] = f"GPU {i}"
            files.append(self.write(f"gpu{i}.json", doc))
        _, md = self.report(*files, out=self.tmp / "report-three")
        self.assertIn("| n×n×n | type | GPU 0 | GPU 1 | GPU 2 |", md)
        _, md = self.report(*files, out=self.tmp / "report-named", extra=["--label", "a", "--label", "b", "--label", "c"])
        self.assertIn("| n×n×n | type | a | b | c |", md)
        for labels, words in [(["--label", "a"], "--label was given 1 times for 3 files"),
                              (["--label", "a", "--label", "a", "--label", "b"], "two files alike")]:
            r = run(REPORT, *files, "--out", self.tmp / "never", *labels)
            self.assertEqual(r.returncode, 2)
            self.assertIn(words, r.stderr)

    def test_report_draws_whiskers_and_labels_minor_ticks(self):
        # What a loaded CPU device measures can span more than four decades with its whiskers, where the minor
        # labels are left off by design (label_minor_ticks): here the cases' rates are set to 3 to 30 GFLOP/s
        # and their slowest and fastest runs to within a factor of two, so the labels must be there.
        out = self.tmp / "report-ticks"
        doc = copy.deepcopy(self.doc)
        for i, c in enumerate(doc["cases"]):
            if c.get("gflops"):
                c["gflops"] = 3.0 * (1 + i % 10)
                t = c.get("gpu_time") or {}
                if t.get("median"):
                    t["min"], t["max"] = 0.8 * t["median"], 1.5 * t["median"]
        other = copy.deepcopy(doc)
        other["device"]["name"] = "Another GPU"
        _, md = self.report(self.write("ticks-first.json", doc), self.write("ticks.json", other), out=out)
        svg = (out / "compare.svg").read_text()
        types = len({c["type"] for c in doc["cases"] if c["status"] in ("passed", "unverified")})
        self.assertGreaterEqual(svg.count('id="LineCollection_'), 2 * types)  # one set of whiskers per line
        # A tick labelled 2 or 5 times a power of ten is a minor one (the major ticks are the powers).
        self.assertTrue(re.search(r"<!-- (0\.0*)?[25]0* -->", svg), "no minor tick is labelled in compare.svg")
        best = max((c for c in doc["cases"] if c["m"] == c["n"] == c["k"] == 16 and c["type"] == "f32"
                    and c["status"] == "passed"), key=lambda c: c["gflops"])
        t = best["gpu_time"]
        slowest = best["gflops"] * t["median"] / t["max"]
        self.assertIn(f'{best["gflops"]:.2f} ({slowest:.3g}–', md)

    def test_report_reads_the_cublas_comparison_beside_the_results(self):
        row = {"m": 512, "n": 512, "k": 512, "op_a": "n", "op_b": "t", "layout": "row", "batch": 1, "group": "square",
               "judged": True, "type": "f32", "cublas_method": "burst", "cublas_tflops": 20.0, "device": "Some GPU",
               "driver": "1.2.3", "kernel": "blocked", "config": "64x64", "vkgemm_tflops": 18.0, "ratio": 0.9,
               "commit": "abc1234", "verified": True, "vkgemm_round_tflops": [18.0], "cublas_round_tflops": [20.0]}
        cublas = {"format": "vkgemm-vs-cublas", "format_version": 1, "device": {"name": "Some GPU", "driver_version": "1.2.3"},
                  "commits": ["abc1234"], "type": "f32", "complete": True,
                  "summary": {"all": {"cases": 1, "geomean": 0.9, "min": 0.9, "min_case": "512x512x512 nt row"}},
                  "rows": [row, dict(row, failed=True, m=1000)]}
        _, md = self.report(self.json_path, self.write("cublas.json", cublas), out=self.tmp / "report-cublas")
        self.assertIn("## Some GPU: vkgemm against cuBLAS, f32", md)
        self.assertIn("| 512×512×512 nt row | square | yes | blocked 64x64 | 18.00 | 20.00 | 0.900 |", md)
        self.assertIn("| 1000×512×512 nt row | square | yes | FAILED |", md)
        del cublas["rows"][0]["ratio"]
        r = run(REPORT, self.write("cublas-bad.json", cublas), "--out", self.tmp / "never")
        self.assertEqual(r.returncode, 2)
        self.assertIn("does not follow vs-cublas.schema.json at rows/0", r.stderr)

    def test_report_refuses_in_one_line(self):
        doc = copy.deepcopy(self.doc)
        doc["cases"] = {"huge": "x" * 8000}  # jsonschema's message quotes the whole value
        for path in [self.write("huge.json", doc), self.write("other-format.json", {"measurements": [1] * 2000})]:
            r = run(REPORT, path, "--out", self.tmp / "never")
            self.assertEqual(r.returncode, 2)
            self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
            self.assertLess(len(r.stderr), 400, r.stderr)
        self.assertFalse((self.tmp / "never").exists())

    def test_bench_bad_invocations(self):
        cases = [(["--sizes", "0"], "--sizes: '0' has 0"),
                 (["--sizes", "64:16:x2"], "ends before it starts"),
                 (["--types", "f17"], "--types: 'f17' is not a type"),
                 (["--kernels", "bogus"], "--kernels: 'bogus' is not a kernel"),
                 (["--repeat", "0"], "--repeat must be between 1"),
                 (["--peak-gflops", "-3"], "--peak-gflops must be positive"),
                 (["--verify-max", "-1"], "--verify-max must be 0 or more"),
                 (["--warmup-ms", "-5"], "--warmup-ms must be between 0 and 10000"),
                 (["--warmup-ms", "nan"], "--warmup-ms must be between 0 and 10000"),
                 (["--steady-tolerance", "0"], "--steady-tolerance must be a percentage above 0"),
                 (["--json", "/nonexistent-dir/r.json"], "--json /nonexistent-dir/r.json: the folder /nonexistent-dir: No such file or directory"),
                 (["--device", "no-such-gpu"], "no device name contains")]
        for args, words in cases:
            with self.subTest(args=args):
                base = [] if args[0] == "--sizes" else ["--sizes", "16"]
                r = run(BINARY, "bench", *base, *args)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertIn(words, r.stderr)
                self.assertEqual(r.stdout, "")

    def test_fail_unsteady_exits_4_when_a_case_is_unsteady(self):
        # A tolerance far below any real drift: the checks' readings differ (unless they are equal to the
        # last digit), so the one case is unsteady, and --fail-unsteady makes that the exit code.
        path = self.tmp / "unsteady.json"
        r = run(BINARY, "bench", "--sizes", "16", "--types", "f32", "--kernels", "naive", "--tiles", "8",
                "--latency-sizes", "none", "--steady-tolerance", "1e-9", "--fail-unsteady", "--json", path)
        doc = json.loads(path.read_text())
        readings = {c["median_ms"] for c in doc["steadiness"]["checks"]}
        drifted = len(readings) > 1
        self.assertEqual(r.returncode, 4 if drifted else 0, r.stdout + r.stderr)
        self.assertEqual(doc["cases"][0]["status"], "unsteady" if drifted else "passed")
        if drifted:
            self.assertIn("drifted", doc["cases"][0]["reason"])
            self.assertIn("1 cases UNSTEADY", r.stdout)

    def test_help_documents_every_option(self):
        r = run(BINARY, "bench", "--help")
        self.assertEqual(r.returncode, 0)
        for option in ["--sizes", "--shapes", "--types", "--kernels", "--tiles", "--repeat", "--warmup",
                       "--verify-max", "--peak-gflops", "--latency-sizes", "--latency-calls", "--seed", "--json",
                       "--csv", "--no-progress", "--device", "--validate", "the device's ceilings are measured first",
                       "--warmup-ms", "--steady-tolerance", "--fail-unsteady"]:
            self.assertIn(option, r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
