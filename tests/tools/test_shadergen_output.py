"""What the generator writes: byte-stable, location-independent, exact, and as reviewed (golden)."""
import os
import re
import shutil
import unittest

import shadergen_testlib as lib

HASH = re.compile(r'"[0-9a-f]{64}"')
HASH_STAND_IN = '"<input hash>"'  # the hash covers the generator's code, so it changes with it
C_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "?": "?"}


def decode_cpp_literal(pieces: list[str]) -> bytes:
    """The bytes of adjacent C++ string literals as emit.py writes them (test-side decoder)."""
    out = bytearray()
    for piece in pieces:
        body = re.fullmatch(r'\s*"(.*)"(sv)?;?', piece).group(1)
        i = 0
        while i < len(body):
            if body[i] != "\\":
                out += body[i].encode()
                i += 1
            elif body[i + 1] in C_ESCAPES:
                out += C_ESCAPES[body[i + 1]].encode()
                i += 2
            else:
                out.append(int(body[i + 1:i + 4], 8))
                i += 4
    return bytes(out)


def wgsl_literals(cpp: str) -> dict[int, bytes]:
    """kWgslN -> decoded bytes, read back from a generated .cpp."""
    found = {}
    for m in re.finditer(r"constexpr std::string_view kWgsl(\d+) =\n((?:    \".*\n)+)", cpp):
        found[int(m.group(1))] = decode_cpp_literal(m.group(2).splitlines())
    return found


class Determinism(lib.Scratch):
    def test_two_runs_are_byte_identical(self):
        first, second = self.root / "one", self.root / "two"
        # Different hash seeds shuffle set and dict-of-set orders if any leak into the output.
        for out, seed in ((first, "1"), (second, "2")):
            args = ["--out-dir", out, "--lib-dir", lib.DEMO_LIBRARY, "--family", "demo",
                    *lib.DEMO_LISTS]
            result = self.shadergen(*args, env={"PYTHONHASHSEED": seed})
            self.assertEqual(result.returncode, 0, result.stderr)
        for name in ("demo_shaders.h", "demo_shaders.cpp"):
            self.assertEqual((first / name).read_bytes(), (second / name).read_bytes(), name)

    def test_output_does_not_depend_on_where_the_inputs_live(self):
        moved = self.root / "elsewhere" / "deeper"
        shutil.copytree(lib.DEMO_DIR, moved)
        here = self.generate(("demo", lib.DEMO_LISTS), out=self.root / "a")
        there = self.generate(("demo", [moved / p.name for p in lib.DEMO_LISTS]),
                              out=self.root / "b", library=moved / "lib")
        self.assertEqual(here.returncode, 0, here.stderr)
        self.assertEqual(there.returncode, 0, there.stderr)
        for name in ("demo_shaders.h", "demo_shaders.cpp"):
            self.assertEqual((self.root / "a" / name).read_bytes(),
                             (self.root / "b" / name).read_bytes(), name)


class Golden(lib.Scratch):
    """data/golden holds the demo family's output, read line by line when it was committed."""

    def test_matches_golden(self):
        result = self.generate(("demo", lib.DEMO_LISTS))
        self.assertEqual(result.returncode, 0, result.stderr)
        for name in ("demo_shaders.h", "demo_shaders.cpp"):
            actual = HASH.sub(HASH_STAND_IN, (self.out / name).read_text())
            golden = lib.GOLDEN_DIR / name
            if os.environ.get("WGX_UPDATE_GOLDEN") == "1":
                golden.write_text(actual)
            self.assertEqual(actual, golden.read_text(),
                             f"{name} differs from {golden}; if the change is intended, rerun "
                             "with WGX_UPDATE_GOLDEN=1 and review the diff")


class Embedding(lib.Scratch):
    def test_wgsl_bytes_survive_escaping(self):
        # CRLF, a lone CR, a NUL, quotes, backslashes, "??=" and multi-byte UTF-8 must all be
        # embedded as they are, and a value is not scanned for placeholders again.
        template = 'a\r\nb\rc\0d "q" \\ ??= \u03c0 \U0001F600 {{x}}\n\tend'
        lists = [self.family_files(template=template, variants=(
            'template = "t.wgsl"\n[[variant]]\nname = "v"\nparams = { x = "{{x}} 7" }\n'))]
        result = self.generate(("f", lists))
        self.assertEqual(result.returncode, 0, result.stderr)
        literals = wgsl_literals((self.out / "f_shaders.cpp").read_text())
        self.assertEqual(literals, {0: template.replace("{{x}}", "{{x}} 7").encode()})

    def test_template_without_placeholders_has_no_params(self):
        lists = [self.family_files(template="fn f() {}\n", variants=(
            'template = "t.wgsl"\n[[variant]]\nname = "only"\n'))]
        result = self.generate(("f", lists))
        self.assertEqual(result.returncode, 0, result.stderr)
        cpp = (self.out / "f_shaders.cpp").read_text()
        self.assertIn('{"t", "only", kWgsl0, {}},', cpp)
        self.assertNotIn("kParams0", cpp)

    def test_matrix_expands_every_combination_sorted_by_name(self):
        variants = """template = "t.wgsl"
[[matrix]]
name = "{wg}.{dtype}"
dtype = ["u32", "f32", "i32"]
wg = [256, 64]
"""
        lists = [self.family_files(variants=variants)]
        result = self.generate(("f", lists))
        self.assertEqual(result.returncode, 0, result.stderr)
        rows = re.findall(r'\{"t", "([^"]+)", kWgsl', (self.out / "f_shaders.cpp").read_text())
        self.assertEqual(rows, ["256.f32", "256.i32", "256.u32", "64.f32", "64.i32", "64.u32"])


if __name__ == "__main__":
    unittest.main()
