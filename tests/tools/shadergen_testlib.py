"""Shared by the test_shadergen_* modules: paths, a scratch family on disk, running the CLI."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE_DIR = Path(os.environ.get("WGX_SOURCE_DIR", HERE.parents[1]))
SHADERGEN_DIR = SOURCE_DIR / "tools" / "shadergen"
SHADERGEN = SHADERGEN_DIR / "shadergen.py"
CMAKE = os.environ.get("WGX_CMAKE") or shutil.which("cmake")
CXX = os.environ.get("WGX_CXX") or shutil.which("c++")
DEMO_DIR = HERE / "data" / "demo"
DEMO_LISTS = [DEMO_DIR / "binary.variants.toml", DEMO_DIR / "fill.variants.toml"]
DEMO_LIBRARY = DEMO_DIR / "lib"
GOLDEN_DIR = HERE / "data" / "golden"

sys.path.insert(0, str(SHADERGEN_DIR))  # the tests also call the generator's modules directly

# A small valid family that tests copy and then break in one place.
TEMPLATE = """@group(0) @binding(0) var<storage, read_write> out: array<{{dtype}}>;
@compute @workgroup_size({{wg}})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  out[gid.x] = {{dtype}}(1);
}
"""
VARIANTS = """template = "t.wgsl"

[[variant]]
name = "f32"
params = { dtype = "f32", wg = 64 }

[[variant]]
name = "u32"
params = { dtype = "u32", wg = 64 }
"""


def cmake_hash(family: str, lists: list[Path], library: Path | None = None) -> str:
    """The input hash cmake/Shaders.cmake computes (raises AssertionError where it stops)."""
    defines = [f"-DLIBRARY={library}"] if library else []
    result = subprocess.run(
        [CMAKE, f"-DFAMILY={family}", f"-DVARIANTS={';'.join(map(str, lists))}", *defines, "-P",
         str(HERE / "print_shader_hash.cmake")],
        capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise AssertionError(result.stderr)
    return result.stdout.strip()


class Scratch(unittest.TestCase):
    """A test with its own temp folder, removed afterwards."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="shadergen-test-")
        self.addCleanup(tmp.cleanup)
        self.root = Path(tmp.name)
        self.out = self.root / "out" / "shaders"

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())
        return path

    def family_files(self, folder: str = "src", template: str = TEMPLATE,
                     variants: str = VARIANTS) -> Path:
        """Writes t.wgsl and t.variants.toml into `folder`; returns the variant list."""
        self.write(f"{folder}/t.wgsl", template)
        return self.write(f"{folder}/t.variants.toml", variants)

    def shadergen(self, *args, env: dict | None = None) -> subprocess.CompletedProcess:
        full_env = dict(os.environ, **(env or {}))
        return subprocess.run([sys.executable, "-B", str(SHADERGEN), *map(str, args)],
                              capture_output=True, text=True, env=full_env, check=False)

    def generate(self, *families: tuple[str, list[Path]], out: Path | None = None,
                 check: bool = False, library: Path = DEMO_LIBRARY) -> subprocess.CompletedProcess:
        args = ["--check"] if check else []
        args += ["--out-dir", out or self.out, "--lib-dir", library]
        for name, lists in families:
            args += ["--family", name, *lists]
        return self.shadergen(*args)

    def snapshot(self, folder: Path) -> dict[str, tuple[bytes, int]]:
        """Name -> (bytes, mtime in ns) of every file in `folder`, temp files included."""
        return {p.name: (p.read_bytes(), p.stat().st_mtime_ns)
                for p in sorted(folder.iterdir()) if p.is_file()}
