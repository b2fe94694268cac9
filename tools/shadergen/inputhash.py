"""The input hash of a family: what the generated .cpp embeds and CMake recomputes.

The recipe is written out in shadergen.py's docstring; cmake/Shaders.cmake
(wgx_shader_input_hash) implements the same one, and tests/tools/test_shadergen_hash.py checks that the
two agree.
"""
import hashlib
import re
from pathlib import Path

from family import Family
from readfile import read_bytes

RECIPE_VERSION = 2
GENERATOR_DIR = Path(__file__).resolve().parent
# Only module-like names: an editor's backup or lock file beside the sources must not count.
GENERATOR_FILE = re.compile(r"[a-z_][a-z0-9_]*\.py")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def generator_files(directory: Path = GENERATOR_DIR) -> list[Path]:
    return sorted((p for p in directory.iterdir() if GENERATOR_FILE.fullmatch(p.name)),
                  key=lambda p: p.name.encode())


def manifest(family: Family, generator: list[Path]) -> str:
    lines = [f"wgx-shadergen-input {RECIPE_VERSION}", f"family {family.name}"]
    lines += [f"generator {p.name} {sha256_hex(read_bytes(p))}" for p in generator]
    for vlist, template in zip(family.lists, family.templates):
        lines += [f"variants {sha256_hex(vlist.raw)}", f"template {sha256_hex(template.raw)}"]
        lines += [f"include {f.name} {sha256_hex(f.raw)}" for f in template.includes]
    return "".join(line + "\n" for line in lines)


def input_hash(family: Family, generator: list[Path] | None = None) -> str:
    files = generator_files() if generator is None else generator
    return sha256_hex(manifest(family, files).encode())
