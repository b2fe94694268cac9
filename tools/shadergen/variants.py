"""Variant lists: `<name>.variants.toml` files that say which variants a template expands to.

    template = "binary.wgsl"              # relative to this file; see TEMPLATE_LINE

    [[variant]]                           # one variant, spelled out
    name = "copy.f32"
    params = { dtype = "f32", workgroup_size = 64 }

    [[matrix]]                            # the cross product of its axes
    name = "{op}.{type}"                  # {axis} is the label of that axis's element
    params = { workgroup_size = 64 }      # shared by every variant of the matrix
    op = [ { label = "add", expr = "a + b" }, { label = "max", expr = "max(a, b)" } ]
    dtype = [ "f32", "i32" ]              # a plain value: the label and the param `dtype`

An axis element is either a plain value (string or integer), which sets the parameter named
like the axis, or a table, which sets several parameters at once and needs a `label`. Parameter
values are strings or integers (integers are written in decimal).
"""
import itertools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from errors import ShaderGenError
from readfile import decode_utf8, read_bytes
from template import IDENT

NAME = re.compile(r"[A-Za-z0-9_.-]+")
PARAM_KEY = re.compile(IDENT)
# cmake/Shaders.cmake finds the template without a TOML parser, by this line; it must be the only
# line that starts like it. Both sides use the same pattern so they cannot disagree.
TEMPLATE_LINE_START = re.compile(r"[ \t]*template[ \t]*=")
TEMPLATE_LINE = re.compile(r'[ \t]*template[ \t]*=[ \t]*"([A-Za-z0-9_./-]+)"[ \t\r]*')
AXIS_REF = re.compile(r"\{(" + IDENT + r")\}")


@dataclass(frozen=True)
class Variant:
    name: str
    params: tuple[tuple[str, str], ...]  # sorted by key
    origin: str  # where it was declared, for messages: "[[matrix]] #2"


@dataclass(frozen=True)
class VariantList:
    path: Path
    raw: bytes  # the file's bytes, as hashed
    template_path: Path
    variants: tuple[Variant, ...]


def load_variant_list(path: Path) -> VariantList:
    raw = read_bytes(path)
    text = decode_utf8(path, raw)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ShaderGenError(f"{path}: invalid TOML: {e}") from None
    unknown = sorted(set(doc) - {"template", "variant", "matrix"})
    if unknown:
        raise ShaderGenError(f"{path}: unknown key '{unknown[0]}' (expected template, [[variant]], "
                             "[[matrix]])")
    template_path = path.parent / _template_name(path, text, doc)
    variants = []
    for i, table in enumerate(_table_array(path, doc, "variant"), 1):
        variants.append(_explicit_variant(path, table, f"[[variant]] #{i}"))
    for i, table in enumerate(_table_array(path, doc, "matrix"), 1):
        variants.extend(_expand_matrix(path, table, f"[[matrix]] #{i}"))
    if not variants:
        raise ShaderGenError(f"{path}: no variants (add a [[variant]] or a [[matrix]])")
    return VariantList(path, raw, template_path, tuple(variants))


def _template_name(path: Path, text: str, doc: dict) -> str:
    value = doc.get("template")
    lines = [line for line in text.split("\n") if TEMPLATE_LINE_START.match(line)]
    match = TEMPLATE_LINE.fullmatch(lines[0]) if len(lines) == 1 else None
    if not isinstance(value, str) or not match or match.group(1) != value:
        raise ShaderGenError(
            f'{path}: name the template once, at the top, on a line of its own: '
            f'template = "name.wgsl" (a relative path of letters, digits, _ . / -)')
    return value


def _table_array(path: Path, doc: dict, key: str) -> list[dict]:
    tables = doc.get(key, [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise ShaderGenError(f"{path}: '{key}' must be written as [[{key}]] tables")
    return tables


def _param_value(path: Path, where: str, key: str, value) -> str:
    # bool is an int in Python; floats are refused because their spelling (1e-5 or 0.00001) would
    # be the generator's choice, not the author's.
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise ShaderGenError(f"{path}: {where}: parameter '{key}' must be a string or an integer, "
                         f"not {type(value).__name__}")


def _params(path: Path, where: str, table) -> dict[str, str]:
    if not isinstance(table, dict):
        raise ShaderGenError(f"{path}: {where}: 'params' must be a table")
    out = {}
    for key, value in table.items():
        if not PARAM_KEY.fullmatch(key):
            raise ShaderGenError(f"{path}: {where}: parameter name '{key}' is not an identifier")
        out[key] = _param_value(path, where, key, value)
    return out


def _checked_name(path: Path, where: str, name) -> str:
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise ShaderGenError(f"{path}: {where}: variant name {name!r} must be a non-empty string of "
                             "letters, digits, _ . -")
    return name


def _explicit_variant(path: Path, table: dict, where: str) -> Variant:
    unknown = sorted(set(table) - {"name", "params"})
    if unknown:
        raise ShaderGenError(f"{path}: {where}: unknown key '{unknown[0]}' (expected name, params)")
    if "name" not in table:
        raise ShaderGenError(f"{path}: {where}: missing 'name'")
    name = _checked_name(path, where, table["name"])
    params = _params(path, f"variant '{name}'", table.get("params", {}))
    return Variant(name, tuple(sorted(params.items())), where)


def _axis_elements(path: Path, where: str, axis: str, values) -> list[tuple[str, dict[str, str]]]:
    """(label, params) for each element of one matrix axis, in the order written."""
    if not PARAM_KEY.fullmatch(axis):
        raise ShaderGenError(f"{path}: {where}: axis name '{axis}' is not an identifier")
    if not isinstance(values, list) or not values:
        raise ShaderGenError(f"{path}: {where}: axis '{axis}' must be a non-empty array")
    elements = []
    for value in values:
        if isinstance(value, dict):
            params = dict(value)
            label = params.pop("label", None)
            if not isinstance(label, str) or not NAME.fullmatch(label):
                raise ShaderGenError(f"{path}: {where}: every table in axis '{axis}' needs a "
                                     "label of letters, digits, _ . -")
            elements.append((label, _params(path, f"{where} axis '{axis}'", params)))
        else:
            text = _param_value(path, f"{where} axis '{axis}'", axis, value)
            elements.append((text, {axis: text}))
    return elements


def _expand_matrix(path: Path, table: dict, where: str) -> list[Variant]:
    pattern = table.get("name")
    if not isinstance(pattern, str):
        raise ShaderGenError(f"{path}: {where}: missing 'name' pattern such as \"{{op}}.{{dtype}}\"")
    shared = _params(path, where, table.get("params", {}))
    axes = {axis: _axis_elements(path, where, axis, values)
            for axis, values in sorted(table.items()) if axis not in ("name", "params")}
    if not axes:
        raise ShaderGenError(f"{path}: {where}: a matrix needs at least one axis")
    referenced = set(AXIS_REF.findall(pattern))
    strangers = sorted(referenced - set(axes))
    if strangers:
        raise ShaderGenError(f"{path}: {where}: name pattern '{pattern}' uses {{{strangers[0]}}}, "
                             "which is not an axis")
    left_out = sorted(a for a in set(axes) - referenced if len(axes[a]) > 1)
    if left_out:
        raise ShaderGenError(f"{path}: {where}: name pattern '{pattern}' leaves out axis "
                             f"'{left_out[0]}', so its variants would share names")
    variants = []
    # Axes in name order, elements in written order: the same input always expands the same way.
    for combo in itertools.product(*axes.values()):
        labels = dict(zip(axes, (label for label, _ in combo)))
        name = AXIS_REF.sub(lambda m: labels[m.group(1)], pattern)
        _checked_name(path, where, name)
        params = dict(shared)
        setters = {key: "params" for key in shared}
        for axis, (_, element_params) in zip(axes, combo):
            for key, value in element_params.items():
                if key in params:
                    raise ShaderGenError(
                        f"{path}: {where}: variant '{name}': parameter '{key}' is set by both "
                        f"{setters[key]} and axis '{axis}'")
                params[key] = value
                setters[key] = f"axis '{axis}'"
        variants.append(Variant(name, tuple(sorted(params.items())), where))
    return variants
