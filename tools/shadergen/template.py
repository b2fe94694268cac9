"""WGSL templates: plain WGSL with `{{name}}` placeholders and `#include` lines, nothing else.

There are no conditionals or loops on purpose: variants differ only in substituted values, so
reading a template (and the library files it includes, includes.py) tells you every shader it can
become. Substitution is a single pass: text coming from a value is never scanned for
placeholders again.
"""
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from errors import ShaderGenError
from includes import LibraryFile, expand
from readfile import decode_utf8, read_bytes

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
PLACEHOLDER = re.compile(r"\{\{(" + IDENT + r")\}\}")


@dataclass(frozen=True)
class Template:
    path: Path
    raw: bytes  # the file's bytes, as hashed
    text: str  # includes expanded
    placeholders: frozenset[str]
    includes: tuple[LibraryFile, ...]  # every library file it pulls in, sorted by name

    @property
    def template_id(self) -> str:
        return self.path.name.removesuffix(".wgsl")

    def render(self, params: Mapping[str, str]) -> str:
        return PLACEHOLDER.sub(lambda m: params[m.group(1)], self.text)


def _scan_placeholders(path: Path, text: str) -> frozenset[str]:
    # Every "{{" must open a well-formed placeholder: "{{ dtype }}" or "{{dtype}" would otherwise
    # pass through into the WGSL and fail much later, inside the GPU driver's compiler.
    names = set()
    pos = text.find("{{")
    while pos >= 0:
        match = PLACEHOLDER.match(text, pos)
        if not match:
            line = text.count("\n", 0, pos) + 1
            column = pos - (text.rfind("\n", 0, pos) + 1) + 1
            snippet = text[pos:pos + 24].split("\n")[0]
            raise ShaderGenError(
                f"{path}:{line}:{column}: malformed placeholder '{snippet}': a placeholder is "
                "{{name}}, name made of letters, digits and _, no spaces")
        names.add(match.group(1))
        pos = text.find("{{", match.end())
    return frozenset(names)


def load_template(path: Path, library: Path | None = None) -> Template:
    """The template at `path`, its includes taken from the folder `library`."""
    if path.suffix != ".wgsl":
        raise ShaderGenError(f"{path}: a template must be a .wgsl file")
    raw = read_bytes(path)
    # Decoded without newline translation, so CRLF files are embedded as they are.
    text = decode_utf8(path, raw)
    # Placeholders are found before expansion, so that messages give the template's own lines;
    # library files have none.
    placeholders = _scan_placeholders(path, text)
    expanded, includes = expand(path, text, library)
    return Template(path, raw, expanded, placeholders, includes)
