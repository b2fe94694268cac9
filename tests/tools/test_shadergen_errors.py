"""Each way an input can be wrong: exit status 1, one line naming file, variant and placeholder."""
import unittest

import shadergen_testlib as lib


class ErrorCase(lib.Scratch):
    def fails(self, *needles: str, template: str = lib.TEMPLATE, variants: str = lib.VARIANTS,
              family: str = "f") -> str:
        """Generates from the given inputs, expects failure, checks the message; returns it."""
        lists = [self.family_files(template=template, variants=variants)]
        result = self.generate((family, lists))
        self.assertEqual(result.returncode, 1, result.stderr)
        message = result.stderr
        self.assertTrue(message.startswith("shadergen: error: "), message)
        self.assertEqual(message.count("\n"), 1, message)  # one line, no traceback
        for needle in needles:
            self.assertIn(needle, message)
        self.assertFalse(self.out.exists(), "a failed run must not create outputs")
        return message


class Errors(ErrorCase):
    def test_unknown_placeholder_in_template(self):
        self.fails("t.wgsl", "unknown placeholder {{dtpye}}", "t.variants.toml",
                   template=lib.TEMPLATE + "// {{dtpye}}\n")

    def test_missing_parameter(self):
        variants = lib.VARIANTS.replace('params = { dtype = "u32", wg = 64 }', 'params = { dtype = "u32" }')
        self.fails("t.variants.toml", "variant 'u32'", "missing parameter 'wg'", "{{wg}}",
                   variants=variants)

    def test_unused_parameter(self):
        variants = lib.VARIANTS.replace("wg = 64 }", "wg = 64, width = 4 }", 1)
        self.fails("t.variants.toml", "variant 'f32'", "unused parameter 'width'",
                   variants=variants)

    def test_duplicate_variant_in_one_list(self):
        variants = lib.VARIANTS.replace('name = "u32"', 'name = "f32"')
        self.fails("t.variants.toml", "variant 'f32'", "[[variant]] #2", "already defined",
                   "[[variant]] #1", variants=variants)

    def test_duplicate_variant_across_lists_of_a_family(self):
        first = self.family_files("a")
        second = self.family_files("b")
        result = self.generate(("f", [first, second]))
        self.assertEqual(result.returncode, 1)
        self.assertIn(f"{second} ([[variant]] #1): variant 'f32' is already defined by {first}",
                      result.stderr)

    def test_malformed_placeholder(self):
        self.fails("t.wgsl:2:26", "malformed placeholder '{{ wg }}", template=lib.TEMPLATE.replace(
            "{{wg}}", "{{ wg }}"))

    def test_unclosed_placeholder(self):
        self.fails("t.wgsl:1:59", "malformed placeholder '{{dtype}>;'",
                   template=lib.TEMPLATE.replace("{{dtype}}>", "{{dtype}>", 1))

    def test_invalid_toml(self):
        self.fails("t.variants.toml", "invalid TOML", variants=lib.VARIANTS + "[[variant\n")

    def test_template_line_must_be_plain(self):
        for line in ('template = "t.wgsl" # note', "template = 't.wgsl'", '"template" = "t.wgsl"'):
            with self.subTest(line=line):
                self.fails("t.variants.toml", 'template = "name.wgsl"',
                           variants=lib.VARIANTS.replace('template = "t.wgsl"', line))

    def test_missing_template_file(self):
        self.fails("nothere.wgsl", "cannot read",
                   variants=lib.VARIANTS.replace("t.wgsl", "nothere.wgsl"))

    def test_missing_variant_list(self):
        result = self.generate(("f", [self.root / "absent.variants.toml"]))
        self.assertEqual(result.returncode, 1)
        self.assertIn("absent.variants.toml: cannot read", result.stderr)

    def test_unknown_keys(self):
        self.fails("t.variants.toml", "unknown key 'variants'",
                   variants=lib.VARIANTS.replace("[[variant]]", "[[variants]]", 1))
        self.fails("t.variants.toml", "[[variant]] #1", "unknown key 'param'",
                   variants=lib.VARIANTS.replace("params", "param", 1))

    def test_no_variants(self):
        self.fails("t.variants.toml", "no variants", variants='template = "t.wgsl"\n')

    def test_float_and_bool_values(self):
        self.fails("variant 'f32'", "parameter 'wg' must be a string or an integer, not float",
                   variants=lib.VARIANTS.replace("wg = 64", "wg = 64.0", 1))
        self.fails("parameter 'wg' must be a string or an integer, not bool",
                   variants=lib.VARIANTS.replace("wg = 64", "wg = true", 1))

    def test_bad_variant_name(self):
        self.fails("variant name 'f 32'", variants=lib.VARIANTS.replace('"f32"', '"f 32"', 1))

    def test_bad_family_name(self):
        for name in ("Elementwise", "two__words", "trailing_", "9lives"):
            with self.subTest(name=name):
                self.fails(f"family name '{name}'", family=name)


class MatrixErrors(ErrorCase):
    HEAD = 'template = "t.wgsl"\n[[matrix]]\n'

    def test_pattern_leaves_out_an_axis(self):
        self.fails("[[matrix]] #1", "leaves out axis 'wg'",
                   variants=self.HEAD + 'name = "{dtype}"\ndtype = ["f32"]\nwg = [64, 128]\n')

    def test_pattern_names_no_axis(self):
        self.fails("name pattern '{dtype}.{op}' uses {op}",
                   variants=self.HEAD + 'name = "{dtype}.{op}"\ndtype = ["f32"]\nwg = [64]\n')

    def test_parameter_set_twice(self):
        variants = self.HEAD + ('name = "{dtype}.{t}"\ndtype = ["f32"]\nwg = [64]\n'
                                't = [{ label = "x", dtype = "u32" }]\n')
        self.fails("variant 'f32.x'", "parameter 'dtype' is set by both axis 'dtype' and axis 't'",
                   variants=variants)

    def test_table_element_needs_label(self):
        self.fails("axis 't' needs a label",
                   variants=self.HEAD + 'name = "{t}"\nwg = [64]\nt = [{ dtype = "f32" }]\n')

    def test_empty_axis(self):
        self.fails("axis 'wg' must be a non-empty array",
                   variants=self.HEAD + 'name = "{dtype}"\ndtype = ["f32"]\nwg = []\n')

    def test_matrix_duplicates_an_explicit_variant(self):
        variants = lib.VARIANTS + '[[matrix]]\nname = "{dtype}"\ndtype = ["f32"]\nwg = [64]\n'
        self.fails("([[matrix]] #1): variant 'f32' is already defined by", "([[variant]] #1)",
                   variants=variants)


if __name__ == "__main__":
    unittest.main()
