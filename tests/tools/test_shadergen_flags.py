"""Flags files: one TOML definition, a C++ header and WGSL constants that agree."""
import re
import subprocess
import unittest

import shadergen_testlib as lib
from shadergen_testlib import CXX

import inputhash  # tools/shadergen, put on sys.path by shadergen_testlib
from family import load_family

FLAGS = """# bits of a params word
BIAS = 1
SCALE_F16 = 2
X_F16 = 8
MODE_LAST = 4294967295
"""


class FlagsCase(lib.Scratch):
    def setUp(self):
        super().setUp()
        self.flags = self.write("lib/demo_flags.toml", FLAGS)

    def header(self) -> str:
        result = self.shadergen("--out-dir", self.out, "--flags", self.flags)
        self.assertEqual(result.returncode, 0, result.stderr)
        return (self.out / "demo_flags.h").read_text()


class Outputs(FlagsCase):
    def test_header_has_each_flag_in_cpp_spelling(self):
        header = self.header()
        self.assertIn("namespace wgx::shaders::demo_flags {", header)
        for line in ("inline constexpr uint32_t kBias = 1;", "inline constexpr uint32_t kScaleF16 = 2;",
                     "inline constexpr uint32_t kXF16 = 8;",
                     "inline constexpr uint32_t kModeLast = 4294967295;"):
            self.assertIn(line, header)

    def test_a_template_that_includes_it_gets_the_same_values(self):
        head, rest = lib.TEMPLATE.split("\n", 1)
        lists = [self.family_files(template=head + '\n#include "demo_flags.toml"\n' + rest)]
        wgsl = load_family("f", lists, self.root / "lib").variants[0].wgsl
        wgsl_values = dict(re.findall(r"^const (\w+) = (\d+)u;$", wgsl, re.M))
        cpp = re.findall(r"constexpr uint32_t (\w+) = (\d+);  // (\w+) in WGSL", self.header())
        self.assertEqual(len(wgsl_values), 4)
        self.assertEqual({name: value for _, value, name in cpp}, wgsl_values)

    def test_editing_the_flags_changes_the_hash_of_families_that_include_them(self):
        head, rest = lib.TEMPLATE.split("\n", 1)
        uses = [self.family_files("uses", template=head + '\n#include "demo_flags.toml"\n' + rest)]
        plain = [self.family_files("plain")]

        def hashes() -> list[str]:
            return [inputhash.input_hash(load_family("f", lists, self.root / "lib"))
                    for lists in (uses, plain)]

        before = hashes()
        self.write("lib/demo_flags.toml", FLAGS.replace("X_F16 = 8", "X_F16 = 16"))
        after = hashes()
        self.assertNotEqual(after[0], before[0])
        self.assertEqual(after[1], before[1])  # negative control: it includes nothing

    def test_check_names_a_stale_header(self):
        self.header()
        result = self.shadergen("--check", "--out-dir", self.out, "--flags", self.flags)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.write("lib/demo_flags.toml", FLAGS + "NEW = 16\n")
        result = self.shadergen("--check", "--out-dir", self.out, "--flags", self.flags)
        self.assertEqual(result.returncode, 3)
        self.assertIn("demo_flags.h differs", result.stderr)

    @unittest.skipUnless(CXX, "needs a C++ compiler (set WGX_CXX)")
    def test_header_compiles(self):
        self.header()
        source = self.write("use.cpp", '#include "demo_flags.h"\n'
                            "static_assert(wgx::shaders::demo_flags::kXF16 == 8);\n")
        result = subprocess.run([CXX, "-std=c++20", "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
                                 f"-I{self.out}", str(source)], capture_output=True, text=True,
                                check=False)
        self.assertEqual(result.returncode, 0, result.stderr)


class Errors(FlagsCase):
    def fails(self, text: str, *needles: str, name: str = "demo_flags.toml") -> None:
        path = self.write(f"lib/{name}", text)
        result = self.shadergen("--out-dir", self.out, "--flags", path)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
        for needle in needles:
            self.assertIn(needle, result.stderr)
        self.assertFalse(self.out.exists())

    def test_bad_values(self):
        for value in ("-1", "4294967296", "true", '"1"', "1.0", "[1]"):
            with self.subTest(value=value):
                self.fails(f"BIAS = {value}\n", "demo_flags.toml", "flag 'BIAS' must be an integer")

    def test_bad_names(self):
        for name in ("bias", "Bias", "_BIAS", "BIAS__F16", "BIAS_"):
            with self.subTest(name=name):
                self.fails(f"{name} = 1\n", f"flag name '{name}'")

    def test_names_that_meet_in_cpp(self):
        self.fails("A1B = 1\nA_1B = 2\n", "'A1B' and 'A_1B' are both kA1b")

    def test_empty_and_invalid_files(self):
        self.fails("# nothing\n", "no flags")
        self.fails("BIAS = \n", "invalid TOML")

    def test_file_name_must_make_a_namespace(self):
        self.fails("BIAS = 1\n", "named like a family", name="Demo-Flags.toml")


if __name__ == "__main__":
    unittest.main()
