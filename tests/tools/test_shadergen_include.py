"""#include lines: library files pulled into templates, once each, and covered by the input hash."""
import unittest

import shadergen_testlib as lib
from shadergen_testlib import CMAKE, cmake_hash

import inputhash  # tools/shadergen, put on sys.path by shadergen_testlib
from family import load_family

A = "fn a() -> u32 { return 1u; }\n"
B = "fn b() -> u32 { return a() + 1u; }\n"


def including(*names: str) -> str:
    """The scratch template with an include line for each name after its first line."""
    head, rest = lib.TEMPLATE.split("\n", 1)
    return head + "\n" + "".join(f'#include "{n}"\n' for n in names) + rest


class IncludeCase(lib.Scratch):
    def setUp(self):
        super().setUp()
        self.library = self.root / "lib"
        self.library.mkdir()

    def lib_file(self, name: str, text: str) -> None:
        (self.library / name).write_bytes(text.encode())

    def wgsl(self, template: str) -> str:
        """The f32 variant's WGSL of a family made of `template`."""
        family = load_family("f", [self.family_files(template=template)], self.library)
        return next(v.wgsl for v in family.variants if v.name == "f32")

    def fails(self, template: str, *needles: str, lib_dir: bool = True) -> None:
        lists = [self.family_files(template=template)]
        args = ["--out-dir", self.out] + (["--lib-dir", self.library] if lib_dir else [])
        result = self.shadergen(*args, "--family", "f", *lists)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertTrue(result.stderr.startswith("shadergen: error: "), result.stderr)
        self.assertEqual(result.stderr.count("\n"), 1, result.stderr)  # one line, no traceback
        for needle in needles:
            self.assertIn(needle, result.stderr)
        self.assertFalse(self.out.exists(), "a failed run must not create outputs")


class Expansion(IncludeCase):
    def test_include_line_becomes_the_file(self):
        self.lib_file("a.wgsl", A)
        wgsl = self.wgsl(including("a.wgsl"))
        head = lib.TEMPLATE.split("\n", 1)[0].replace("{{dtype}}", "f32")
        self.assertTrue(wgsl.startswith(head + "\n" + A), wgsl)
        self.assertNotIn("#include", wgsl)

    def test_included_twice_is_pulled_in_once(self):
        self.lib_file("a.wgsl", A)
        self.lib_file("b.wgsl", '#include "a.wgsl"\n' + B)
        wgsl = self.wgsl(including("a.wgsl", "b.wgsl", "a.wgsl"))
        self.assertEqual(wgsl.count(A), 1, wgsl)
        self.assertEqual(wgsl.count(B), 1, wgsl)

    def test_nested_includes_expand_in_place(self):
        self.lib_file("a.wgsl", A)
        self.lib_file("b.wgsl", '#include "a.wgsl"\n' + B)
        wgsl = self.wgsl(including("b.wgsl"))
        self.assertIn(A + B, wgsl)
        family = load_family("f", [self.root / "src" / "t.variants.toml"], self.library)
        self.assertEqual([f.name for f in family.templates[0].includes], ["a.wgsl", "b.wgsl"])

    def test_a_file_without_a_final_newline_still_ends_its_line(self):
        self.lib_file("a.wgsl", A.rstrip("\n"))
        self.assertIn(A + "@compute", self.wgsl(including("a.wgsl")).replace(
            lib.TEMPLATE.split("\n")[1] + "\n", ""))

    def test_negative_control_text_that_only_mentions_an_include_is_kept(self):
        # Not from the first column: WGSL text (here a comment), not an include.
        template = lib.TEMPLATE + '// #include "nothere.wgsl"\n'
        self.assertEqual(self.wgsl(template), template.replace("{{dtype}}", "f32").replace(
            "{{wg}}", "64"))

    def test_the_cli_takes_the_library_folder(self):
        self.lib_file("a.wgsl", A)
        lists = [self.family_files(template=including("a.wgsl"))]
        result = self.shadergen("--out-dir", self.out, "--lib-dir", self.library, "--family", "f",
                                *lists)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("fn a() -> u32", (self.out / "f_shaders.cpp").read_text())


class Errors(IncludeCase):
    def test_cycle(self):
        self.lib_file("a.wgsl", '#include "b.wgsl"\n' + A)
        self.lib_file("b.wgsl", B + '#include "a.wgsl"\n')
        self.fails(including("a.wgsl"), "b.wgsl:2: include cycle: a.wgsl -> b.wgsl -> a.wgsl")

    def test_a_file_that_includes_itself(self):
        self.lib_file("a.wgsl", '#include "a.wgsl"\n')
        self.fails(including("a.wgsl"), "a.wgsl:1: include cycle: a.wgsl -> a.wgsl")

    def test_missing_file(self):
        self.fails(including("nothere.wgsl"), 't.wgsl:2: #include "nothere.wgsl": no such file in')

    def test_missing_file_in_a_library_file(self):
        self.lib_file("a.wgsl", A + '#include "nothere.wgsl"\n')
        self.fails(including("a.wgsl"), 'a.wgsl:2: #include "nothere.wgsl": no such file')

    def test_no_library_folder(self):
        self.fails(including("a.wgsl"), 't.wgsl:2: #include "a.wgsl": no library folder',
                   lib_dir=False)

    def test_malformed_include_lines(self):
        for line in ("#include <a.wgsl>", '  #include "a.wgsl"', '#include "A.wgsl"',
                     '#include "a.wgsl" // why', '#include "sub/a.wgsl"', '#include "a.glsl"',
                     "#define X 1"):
            with self.subTest(line=line):
                head, rest = lib.TEMPLATE.split("\n", 1)
                self.fails(head + "\n" + line + "\n" + rest, "t.wgsl:2: malformed include")

    def test_placeholder_in_a_library_file(self):
        self.lib_file("a.wgsl", A + "fn c() -> {{dtype}} { return 0; }\n")
        self.fails(including("a.wgsl"), "a.wgsl:2: a library file takes no placeholders")


class Hash(IncludeCase):
    def hash(self, lists) -> str:
        return inputhash.input_hash(load_family("f", lists, self.library))

    def test_the_manifest_lists_every_included_file(self):
        self.lib_file("b.wgsl", '#include "a.wgsl"\n' + B)
        self.lib_file("a.wgsl", A)
        lists = [self.family_files(template=including("b.wgsl"))]
        text = inputhash.manifest(load_family("f", lists, self.library), [])
        sha = inputhash.sha256_hex
        b_text = '#include "a.wgsl"\n' + B
        self.assertTrue(text.endswith(f"include a.wgsl {sha(A.encode())}\n"
                                      f"include b.wgsl {sha(b_text.encode())}\n"), text)

    def test_editing_an_included_file_changes_the_hash(self):
        self.lib_file("a.wgsl", A)
        self.lib_file("b.wgsl", '#include "a.wgsl"\n' + B)
        lists = [self.family_files(template=including("b.wgsl"))]
        base = self.hash(lists)
        self.lib_file("a.wgsl", A + "\n")  # included through b.wgsl
        self.assertNotEqual(self.hash(lists), base)

    def test_negative_control_a_file_nobody_includes_does_not_count(self):
        self.lib_file("a.wgsl", A)
        lists = [self.family_files(template=including("a.wgsl"))]
        base = self.hash(lists)
        self.lib_file("other.wgsl", "fn other() {}\n")
        self.assertEqual(self.hash(lists), base)

    def test_only_the_families_that_include_a_file_are_regenerated(self):
        self.lib_file("a.wgsl", A)
        uses = [self.family_files("uses", template=including("a.wgsl"))]
        plain = [self.family_files("plain")]
        run = ("--out-dir", self.out, "--lib-dir", self.library, "--family", "uses", *uses,
               "--family", "plain", *plain)
        self.assertEqual(self.shadergen(*run).returncode, 0)
        before = self.snapshot(self.out)
        self.lib_file("a.wgsl", A + "fn a2() {}\n")
        result = self.shadergen(*run)
        self.assertEqual(result.returncode, 0, result.stderr)
        after = self.snapshot(self.out)
        self.assertNotEqual(after["uses_shaders.cpp"], before["uses_shaders.cpp"])
        for name in ("plain_shaders.cpp", "plain_shaders.h", "uses_shaders.h"):
            self.assertEqual(after[name], before[name], name)

    @unittest.skipUnless(CMAKE, "needs cmake (set WGX_CMAKE)")
    def test_cmake_finds_the_same_includes(self):
        self.lib_file("a.wgsl", A)
        self.lib_file("b.wgsl", '#include "a.wgsl"\n#include "k.toml"\n' + B)
        self.lib_file("k.toml", "ONE = 1\n")
        self.lib_file("unused.wgsl", "fn unused() {}\n")
        lists = [self.family_files(template=including("b.wgsl", "a.wgsl").replace("\n", "\r\n"))]
        self.assertEqual(cmake_hash("f", lists, self.library), self.hash(lists))
        self.lib_file("k.toml", "ONE = 2\n")
        self.assertEqual(cmake_hash("f", lists, self.library), self.hash(lists))

    @unittest.skipUnless(CMAKE, "needs cmake (set WGX_CMAKE)")
    def test_cmake_stops_on_a_missing_file(self):
        lists = [self.family_files(template=including("nothere.wgsl"))]
        with self.assertRaisesRegex(AssertionError, r'#include "nothere.wgsl": no such\s+file'):
            cmake_hash("f", lists, self.library)


if __name__ == "__main__":
    unittest.main()
