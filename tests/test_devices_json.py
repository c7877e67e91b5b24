#!/usr/bin/python3
"""`vkgemm devices --json` against docs/devices.schema.json, on this machine's devices, under validation.

The document must follow the schema (which lists every field the program writes and allows no other), name
the devices the text listing names in the same order, and give each device's cooperative-matrix shapes as
the text listing counts them. Run by CTest with VKGEMM_BINARY and VKGEMM_SOURCE_DIR set.
"""
import json
import os
import re
import subprocess
import unittest
from pathlib import Path

import jsonschema

BINARY = os.environ["VKGEMM_BINARY"]
SCHEMA = json.loads((Path(os.environ["VKGEMM_SOURCE_DIR"]) / "docs" / "devices.schema.json").read_text())
ENV = dict(os.environ, VKGEMM_VALIDATION="1")


def run(*args):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, env=ENV, timeout=120)


class DevicesJson(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.json_run, cls.text_run = run("devices", "--json"), run("devices")

    def test_the_document_follows_the_schema(self):
        self.assertEqual(self.json_run.returncode, 0, self.json_run.stderr)
        jsonschema.Draft202012Validator.check_schema(SCHEMA)
        doc = json.loads(self.json_run.stdout)  # stdout is the document alone
        jsonschema.Draft202012Validator(SCHEMA).validate(doc)
        self.assertGreater(len(doc["devices"]), 0)

    def test_the_document_and_the_listing_name_the_same_devices(self):
        doc = json.loads(self.json_run.stdout)
        listed = re.findall(r"^\[(\d+)\] (.+)$", self.text_run.stdout, re.M)
        self.assertEqual([(str(d["index"]), d["name"]) for d in doc["devices"]], listed)
        counts = [int(n) for n in re.findall(r"VK_KHR_cooperative_matrix, (\d+) shapes", self.text_run.stdout)]
        self.assertEqual([len(d["coopmat"]["shapes"]) for d in doc["devices"] if d["coopmat"]["khr"]], counts)

    def test_the_document_and_the_listing_agree_on_subnormals(self):
        doc = json.loads(self.json_run.stdout)
        listed = re.findall(r"subnormals +kept on request: f16 (yes|no), f32 (yes|no), f64 (yes|no)", self.text_run.stdout)
        kept = [tuple("yes" if d["subnormals_on_request"][w] else "no" for w in ("f16", "f32", "f64"))
                for d in doc["devices"]]
        self.assertEqual(kept, listed)

    def test_the_schema_refuses_what_the_program_does_not_write(self):
        doc = json.loads(self.json_run.stdout)
        doc["devices"][0]["surprise"] = 1
        with self.assertRaises(jsonschema.ValidationError):
            jsonschema.validate(doc, SCHEMA)
        del doc["devices"][0]["surprise"], doc["devices"][0]["coopmat"]
        with self.assertRaises(jsonschema.ValidationError):
            jsonschema.validate(doc, SCHEMA)

    def test_a_bad_option_is_refused_before_any_work(self):
        bad = run("devices", "--json=maybe")
        self.assertNotEqual(bad.returncode, 0)
        self.assertEqual(bad.stdout, "")


if __name__ == "__main__":
    unittest.main()
