"""Includes: a template line `#include "name.wgsl"` pulls in a file of the WGSL library folder.

    #include "f16_pack.wgsl"      # the whole line, from its first column; nothing else on it
    #include "quant_flags.toml"   # a flags file (flags.py): its constants as WGSL

The included text replaces the line. A file is pulled in once per template: a second include of
the same name, direct or through another library file, adds nothing. Library files may include
other library files; a cycle, a missing file or a malformed include line stops the generator with
the file and line of the include. Library files take no placeholders: every kernel that
includes one gets the same text.

cmake/Shaders.cmake finds the same includes without running this code (INCLUDE_LINE is the
pattern both use), so that the input hash covers every file a template pulls in.
"""
import re
from dataclasses import dataclass
from pathlib import Path

from errors import ShaderGenError
from flags import flags_wgsl, load_flags
from readfile import decode_utf8, read_bytes

# Library file names: lower case words, then .wgsl (WGSL) or .toml (flags).
INCLUDE_LINE = re.compile(r'#include "([a-z0-9_]+\.(?:wgsl|toml))"[ \t\r]*')


@dataclass(frozen=True)
class LibraryFile:
    name: str
    raw: bytes  # the file's bytes, as hashed


def expand(path: Path, text: str, library: Path | None) -> tuple[str, tuple[LibraryFile, ...]]:
    """`text` (of the template at `path`) with its includes expanded, and the library files it
    pulled in, sorted by name."""
    files: dict[str, LibraryFile] = {}
    expanded = _expand(path, text, library, [], files)
    return expanded, tuple(files[name] for name in sorted(files, key=str.encode))


def _expand(path: Path, text: str, library: Path | None, stack: list[str],
            files: dict[str, LibraryFile]) -> str:
    lines = text.split("\n")
    out = []
    for number, line in enumerate(lines, 1):
        end = "\n" if number < len(lines) else ""
        if not line.lstrip(" \t").startswith("#"):
            out.append(line + end)
            continue
        match = INCLUDE_LINE.fullmatch(line)
        if not match:
            raise ShaderGenError(f"{path}:{number}: malformed include '{line.strip()}': write "
                                 '#include "name.wgsl" alone on a line, from its first column '
                                 "(name: lower case letters, digits, _; .wgsl or .toml)")
        name = match.group(1)
        if name in stack:
            chain = " -> ".join(stack[stack.index(name):] + [name])
            raise ShaderGenError(f"{path}:{number}: include cycle: {chain}")
        if name in files:
            continue  # once per template
        if library is None:
            raise ShaderGenError(f'{path}:{number}: #include "{name}": no library folder given '
                                 "(--lib-dir)")
        file = library / name
        if not file.is_file():
            raise ShaderGenError(f'{path}:{number}: #include "{name}": no such file in {library}')
        raw = read_bytes(file)
        files[name] = LibraryFile(name, raw)
        body = _library_text(file, raw, library, stack + [name], files)
        if body and not body.endswith("\n"):
            body += "\n"
        out.append(body)
    return "".join(out)


def _library_text(file: Path, raw: bytes, library: Path, stack: list[str],
                  files: dict[str, LibraryFile]) -> str:
    if file.suffix == ".toml":
        return flags_wgsl(load_flags(file, raw))
    text = decode_utf8(file, raw)
    if "{{" in text:
        line = text.count("\n", 0, text.find("{{")) + 1
        raise ShaderGenError(f"{file}:{line}: a library file takes no placeholders (every kernel "
                             "that includes it gets the same text)")
    return _expand(file, text, library, stack, files)
