"""The input hash: Python and CMake compute the same one, and a mismatch stops the build."""
import re
import subprocess
import unittest

import shadergen_testlib as lib
from shadergen_testlib import CMAKE, CXX, cmake_hash

import emit  # tools/shadergen, put on sys.path by shadergen_testlib
import inputhash
from family import load_family

@unittest.skipUnless(CMAKE, "needs cmake (set WGX_CMAKE)")
class CMakeAgrees(lib.Scratch):
    def test_demo_family(self):
        family = load_family("demo", lib.DEMO_LISTS, lib.DEMO_LIBRARY)
        self.assertEqual(family.templates[0].includes[0].name, "demo_flags.toml")  # it has some
        self.assertEqual(cmake_hash("demo", lib.DEMO_LISTS, lib.DEMO_LIBRARY),
                         inputhash.input_hash(family))

    def test_order_and_name_matter_and_both_sides_see_it(self):
        reverse = list(reversed(lib.DEMO_LISTS))
        hashes = {cmake_hash(name, lists, lib.DEMO_LIBRARY)
                  for name, lists in (("demo", lib.DEMO_LISTS), ("demo", reverse), ("other", lib.DEMO_LISTS))}
        self.assertEqual(len(hashes), 3)
        self.assertEqual(cmake_hash("demo", reverse, lib.DEMO_LIBRARY),
                         inputhash.input_hash(load_family("demo", reverse, lib.DEMO_LIBRARY)))

    def test_template_in_a_subfolder_with_crlf_lines(self):
        variants = lib.VARIANTS.replace('"t.wgsl"', '"sub/t.wgsl"').replace("\n", "\r\n")
        self.write("src/sub/t.wgsl", lib.TEMPLATE)
        lists = [self.write("src/t.variants.toml", variants)]
        self.assertEqual(cmake_hash("f", lists), inputhash.input_hash(load_family("f", lists)))

    def test_cmake_rejects_what_the_generator_rejects(self):
        lists = [self.family_files(variants=lib.VARIANTS.replace(
            'template = "t.wgsl"', 'template = "t.wgsl" # trailing comment'))]
        with self.assertRaisesRegex(AssertionError, 'template = "name.wgsl"'):
            cmake_hash("f", lists)


class Recipe(lib.Scratch):
    def test_manifest_is_the_documented_one(self):
        lists = [self.family_files()]
        family = load_family("f", lists)
        generator = inputhash.generator_files()
        text = inputhash.manifest(family, generator)
        sha = inputhash.sha256_hex
        expected = ["wgx-shadergen-input 2", "family f"]
        expected += [f"generator {p.name} {sha(p.read_bytes())}" for p in generator]
        expected += [f"variants {sha(lists[0].read_bytes())}",
                     f"template {sha((lists[0].parent / 't.wgsl').read_bytes())}"]
        self.assertEqual(text, "\n".join(expected) + "\n")
        self.assertEqual([p.name for p in generator], sorted(
            p.name for p in lib.SHADERGEN_DIR.glob("*.py")))
        self.assertIn("shadergen.py", [p.name for p in generator])

    def test_every_input_changes_the_hash(self):
        lists = [self.family_files()]
        base = inputhash.input_hash(load_family("f", lists))
        self.write("src/t.wgsl", lib.TEMPLATE + "\n")
        changed_template = inputhash.input_hash(load_family("f", lists))
        self.write("src/t.variants.toml", lib.VARIANTS + "\n")
        changed_list = inputhash.input_hash(load_family("f", lists))
        extra = self.write("gen/extra.py", "")
        changed_generator = inputhash.input_hash(
            load_family("f", lists), inputhash.generator_files() + [extra])
        self.assertEqual(len({base, changed_template, changed_list, changed_generator}), 4)

    def test_editor_files_beside_the_generator_do_not_count(self):
        for name in ("a.py", "_b.py", ".#a.py", "A.py", "a.py~", "a.pyc", "a-b.py"):
            self.write(f"gen/{name}", "")
        names = [p.name for p in inputhash.generator_files(self.root / "gen")]
        self.assertEqual(names, ["_b.py", "a.py"])


@unittest.skipUnless(CXX, "needs a C++ compiler (set WGX_CXX)")
class StaleCannotBuild(lib.Scratch):
    """The static_assert in a generated .cpp, with a positive and a negative control."""

    def setUp(self):
        super().setUp()
        self.lists = [self.family_files()]
        result = self.generate(("f", self.lists))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.digest = re.search(r'kInputHash = "([0-9a-f]{64})"',
                                (self.out / "f_shaders.cpp").read_text()).group(1)

    def compile(self, *defines: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [CXX, "-std=c++20", "-fsyntax-only", "-Wall", "-Wextra", "-Wpedantic", "-Werror",
             f"-I{lib.SOURCE_DIR / 'src'}", f"-I{self.out.parent}", *defines,
             str(self.out / "f_shaders.cpp")],
            capture_output=True, text=True, check=False)

    def test_matching_hash_compiles(self):
        result = self.compile(f'-D{emit.hash_macro("f")}="{self.digest}"')
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_other_hash_does_not_compile(self):
        result = self.compile(f'-D{emit.hash_macro("f")}="{"0" * 64}"')
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("f_shaders.cpp is stale", result.stderr)

    def test_missing_hash_does_not_compile(self):
        result = self.compile()
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("WGX_SHADERS_F_HASH is not defined", result.stderr)


if __name__ == "__main__":
    unittest.main()
