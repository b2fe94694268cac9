"""A failed run leaves every previous output as it was; --check finds stale outputs."""
import os
import unittest
from unittest import mock

import shadergen_testlib as lib

import outputs  # tools/shadergen, put on sys.path by shadergen_testlib
import shadergen


class Rollback(lib.Scratch):
    def setUp(self):
        super().setUp()
        self.first = self.family_files("first")
        self.second = self.family_files("second")
        self.families = [("first", [self.first]), ("second", [self.second])]
        result = self.generate(*self.families)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.before = self.snapshot(self.out)
        self.assertEqual(sorted(self.before), ["first_shaders.cpp", "first_shaders.h",
                                               "second_shaders.cpp", "second_shaders.h"])
        # From here on every output would change, so an untouched file proves nothing was written.
        for folder in ("first", "second"):
            self.write(f"{folder}/t.wgsl", lib.TEMPLATE.replace("(1)", "(2)"))

    def assert_untouched(self):
        self.assertEqual(self.snapshot(self.out), self.before)  # bytes, mtimes, and no temp files

    def test_broken_second_family_keeps_first_family_output(self):
        self.write("second/t.wgsl", lib.TEMPLATE + "{{oops}}\n")
        result = self.generate(*self.families)
        self.assertEqual(result.returncode, 1)
        self.assertIn("unknown placeholder {{oops}}", result.stderr)
        self.assert_untouched()

    def test_io_error_while_writing_temp_files(self):
        real = outputs._write_temp
        calls = []

        def fail_on_second(path, data, mode):
            calls.append(path)
            if len(calls) == 2:  # the first temp file exists by then and must be removed
                raise OSError(28, "No space left on device")
            return real(path, data, mode)

        with mock.patch.object(outputs, "_write_temp", fail_on_second):
            status = self.run_main()
        self.assertEqual(status, shadergen.EXIT_ERROR)
        self.assertEqual(len(calls), 2)
        self.assert_untouched()

    def test_io_error_while_renaming_restores_what_was_renamed(self):
        real = os.replace
        calls = []

        def fail_on_second(src, dst):
            calls.append(dst)
            if len(calls) == 2:
                raise OSError(5, "Input/output error")
            return real(src, dst)

        with mock.patch.object(outputs.os, "replace", fail_on_second):
            status = self.run_main()
        self.assertEqual(status, shadergen.EXIT_ERROR)
        self.assertGreater(len(calls), 2, "the first renamed file must have been put back")
        for name, (data, _) in self.snapshot(self.out).items():
            self.assertEqual(data, self.before[name][0], name)
        self.assertEqual(sorted(self.snapshot(self.out)), sorted(self.before))

    def test_success_rewrites_only_changed_files(self):
        result = self.generate(*self.families)
        self.assertEqual(result.returncode, 0, result.stderr)
        after = self.snapshot(self.out)
        self.assertEqual(sorted(after), sorted(self.before))
        for name in ("first_shaders.h", "second_shaders.h"):  # headers do not depend on WGSL
            self.assertEqual(after[name], self.before[name], name)
        for name in ("first_shaders.cpp", "second_shaders.cpp"):
            self.assertNotEqual(after[name][0], self.before[name][0], name)
        self.assertEqual(os.stat(self.out / "first_shaders.cpp").st_mode & 0o777,
                         0o666 & ~self.umask())

    def run_main(self) -> int:
        args = ["--out-dir", str(self.out)]
        for name, lists in self.families:
            args += ["--family", name, *map(str, lists)]
        with mock.patch("sys.stderr"):
            return shadergen.main(args)

    @staticmethod
    def umask() -> int:
        mask = os.umask(0)
        os.umask(mask)
        return mask


class Check(lib.Scratch):
    def setUp(self):
        super().setUp()
        self.families = [("f", [self.family_files()])]
        result = self.generate(*self.families)
        self.assertEqual(result.returncode, 0, result.stderr)

    def check(self):
        before = self.snapshot(self.out)
        result = self.generate(*self.families, check=True)
        self.assertEqual(self.snapshot(self.out), before, "--check must not write")
        return result

    def test_fresh_outputs_pass(self):
        result = self.check()
        self.assertEqual((result.returncode, result.stderr), (0, ""))

    def test_changed_template_makes_the_source_stale(self):
        self.write("src/t.wgsl", lib.TEMPLATE.replace("(1)", "(2)"))
        result = self.check()
        self.assertEqual(result.returncode, shadergen.EXIT_STALE)
        self.assertEqual(result.stderr, f"shadergen: stale: {self.out / 'f_shaders.cpp'} differs "
                                        "from what its inputs generate\n")

    def test_edited_output_is_stale(self):
        header = self.out / "f_shaders.h"
        header.write_text(header.read_text() + "// local edit\n")
        result = self.check()
        self.assertEqual(result.returncode, shadergen.EXIT_STALE)
        self.assertIn(str(header), result.stderr)

    def test_missing_output_is_stale(self):
        (self.out / "f_shaders.cpp").unlink()
        result = self.check()
        self.assertEqual(result.returncode, shadergen.EXIT_STALE)
        self.assertIn(f"{self.out / 'f_shaders.cpp'} is missing", result.stderr)

    def test_bad_input_is_an_error_not_stale(self):
        self.write("src/t.wgsl", "{{nope}}")
        result = self.check()
        self.assertEqual(result.returncode, shadergen.EXIT_ERROR)


if __name__ == "__main__":
    unittest.main()
