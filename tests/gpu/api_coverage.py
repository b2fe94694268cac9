"""Fails when a function declared in src/gpu/webgpu_api.h is never used in the rest of src/gpu/.

A declaration nobody calls is an unchecked claim about the ABI; the GPU tests exercise every
call site, so each declared entry point must have one.
"""
import pathlib
import re
import sys

header, src_dir = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
declared = sorted(set(re.findall(r"^\s*[\w\s\*]+?\b(wgpu\w+)\(", header.read_text(), re.M)))
sources = [p for p in sorted(src_dir.glob("*.[ch]*")) if p.resolve() != header.resolve()]
code = "\n".join(p.read_text() for p in sources)
# A use is a call or a function-pointer argument (Handle<T, wgpuXRelease>) in the sources.
uncalled = [f for f in declared if not re.search(rf"\b{f}\b", code)]
print(f"{len(declared)} declared WebGPU entry points, {len(declared) - len(uncalled)} used")
if len(declared) < 40:
    sys.exit(f"parsed only {len(declared)} declarations from {header}: the pattern is broken")
if uncalled:
    sys.exit("declared but never used: " + ", ".join(uncalled))
