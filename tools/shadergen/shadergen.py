#!/usr/bin/env python3
"""Expands WGSL templates into C++ sources that embed every variant of a shader family.

    shadergen.py --out-dir DIR [--lib-dir LIB] --family NAME LIST.variants.toml [LIST ...]
                 [--family ...] [--flags FLAGS.toml ...]
    shadergen.py --check ...

For each family NAME it writes DIR/NAME_shaders.h and DIR/NAME_shaders.cpp (the struct they
return is in src/shaders/shader_variant.h; the variant list format is in README.md); templates
take the files they #include from LIB (includes.py). For each flags file (flags.py) it writes
DIR/<its name>.h, the C++ side of the constants that templates include from it. Every input
is read, checked and rendered in memory before any output is touched; changed outputs are then
written to temp files in DIR and renamed into place, so a failed run leaves all previous outputs
as they were. An output whose content would not change is not rewritten.

--check writes nothing: it names each output that is missing or differs from what the inputs
generate.

Exit status: 0 done; 1 bad input or I/O error (one line on stderr naming the file, variant and
placeholder involved); 2 bad command line; 3 --check found a stale output.

Input hash. The generated .cpp embeds it and static_asserts that it equals the macro
WGX_SHADERS_<NAME>_HASH, which cmake/Shaders.cmake computes at configure time from the same files,
so a .cpp generated from other inputs than the ones CMake saw cannot compile. With H(x) the
lowercase hex SHA-256 of x, the manifest is these lines, each ending in "\\n":

    wgx-shadergen-input 2
    family NAME
    generator FILE H(FILE)      for each file of tools/shadergen/ named [a-z_][a-z0-9_]*.py,
                                in byte order of the names (the generator's version is its code)
    variants H(LIST)            for each variant list, in command-line order,
    template H(TEMPLATE)        followed by the template it names
    include NAME H(FILE)        and each library file the template pulls in (directly or through
                                other library files), in byte order of the names

and the input hash is H(manifest). Files are hashed as raw bytes. Only file names enter it, never
paths, so every checkout and build folder gets the same hash and the same output.
"""
import argparse
import sys
from pathlib import Path

if sys.version_info < (3, 11):
    sys.exit("shadergen: needs Python 3.11 or newer (for tomllib)")

import emit  # noqa: E402  (after the version check: the modules need 3.11)
from errors import ShaderGenError  # noqa: E402
from family import load_family  # noqa: E402
from flags import flags_header, load_flags  # noqa: E402
from inputhash import input_hash  # noqa: E402
from outputs import stale, write_all  # noqa: E402

EXIT_ERROR, EXIT_USAGE, EXIT_STALE = 1, 2, 3


def render_outputs(out_dir: Path, families: list[list[str]], library: Path | None = None,
                   flags: list[Path] = ()) -> dict[Path, bytes]:
    """Every output of every family and flags file, in memory; raises ShaderGenError before any
    is written."""
    outputs: dict[Path, bytes] = {}
    names = set()
    for name, *lists in families:
        if name in names:
            raise ShaderGenError(f"family '{name}' is given twice")
        names.add(name)
        family = load_family(name, [Path(p) for p in lists], library)
        outputs[out_dir / f"{name}_shaders.h"] = emit.header(family).encode()
        outputs[out_dir / f"{name}_shaders.cpp"] = emit.source(family, input_hash(family)).encode()
    for path in flags:
        loaded = load_flags(path)
        header = out_dir / f"{loaded.namespace}.h"
        if header in outputs:
            raise ShaderGenError(f"{path}: its header {header.name} is another output's name")
        outputs[header] = flags_header(loaded).encode()
    return outputs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="shadergen.py", description=__doc__.split("\n")[0])
    parser.add_argument("--out-dir", required=True, type=Path,
                        help="folder for <family>_shaders.h and <family>_shaders.cpp")
    parser.add_argument("--lib-dir", type=Path,
                        help="the library folder that templates #include files from")
    parser.add_argument("--family", action="append", nargs="+", default=[],
                        metavar=("NAME", "VARIANTS"), help="a family and its variant lists")
    parser.add_argument("--flags", action="append", type=Path, default=[], metavar="FLAGS",
                        help="a flags file (.toml) to write the C++ header of")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; fail naming each output that is stale")
    args = parser.parse_args(argv)
    if not args.family and not args.flags:
        parser.error("give at least one --family or --flags")
    for family in args.family:
        if len(family) < 2:
            parser.error(f"--family {family[0]}: give at least one variant list after the name")
    try:
        outputs = render_outputs(args.out_dir, args.family, args.lib_dir, args.flags)
        if args.check:
            old = stale(outputs)
            for path in old:
                why = "differs from what its inputs generate" if path.exists() else "is missing"
                print(f"shadergen: stale: {path} {why}", file=sys.stderr)
            return EXIT_STALE if old else 0
        write_all(outputs)
    except ShaderGenError as e:
        print(f"shadergen: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    return 0


if __name__ == "__main__":
    sys.exit(main())
