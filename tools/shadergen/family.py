"""A shader family: every variant of one or more variant lists, checked and rendered in memory.

A family becomes one generated .h/.cpp pair; variant names are unique across the whole family
because find_<family>() looks them up by name alone.
"""
import re
from dataclasses import dataclass
from pathlib import Path

from errors import ShaderGenError
from template import Template, load_template
from variants import VariantList, load_variant_list

# Lower case, words joined by single underscores: the name goes into C++ function names and, upper
# cased, into a macro; "__" would be a reserved identifier. cmake/Shaders.cmake checks the same.
FAMILY_NAME = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*")


@dataclass(frozen=True)
class RenderedVariant:
    template_id: str
    name: str
    params: tuple[tuple[str, str], ...]
    wgsl: str
    origin: str  # "<list file name> <[[matrix]] #1>", for the generated comment


@dataclass(frozen=True)
class Family:
    name: str
    lists: tuple[VariantList, ...]
    templates: tuple[Template, ...]  # one per list, same order
    variants: tuple[RenderedVariant, ...]  # sorted by name


def load_family(name: str, list_paths: list[Path], library: Path | None = None) -> Family:
    """The family of these variant lists; their templates' includes come from `library`."""
    if not FAMILY_NAME.fullmatch(name):
        raise ShaderGenError(f"family name '{name}' must be lower case letters and digits, words "
                             "joined by single underscores")
    if not list_paths:
        raise ShaderGenError(f"family '{name}': no variant lists")
    lists, templates, rendered = [], [], []
    cache: dict[Path, Template] = {}
    seen: dict[str, str] = {}
    for path in list_paths:
        vlist = load_variant_list(path)
        template = cache.get(vlist.template_path) or load_template(vlist.template_path, library)
        cache[vlist.template_path] = template
        _check_params(vlist, template)
        for variant in vlist.variants:
            where = f"{path} ({variant.origin})"
            if variant.name in seen:
                raise ShaderGenError(f"{where}: variant '{variant.name}' is already defined by "
                                     f"{seen[variant.name]}")
            seen[variant.name] = where
            wgsl = template.render(dict(variant.params))
            rendered.append(RenderedVariant(template.template_id, variant.name, variant.params,
                                            wgsl, f"{path.name} {variant.origin}"))
        lists.append(vlist)
        templates.append(template)
    rendered.sort(key=lambda v: v.name.encode())  # the byte order C++ compares string_views in
    return Family(name, tuple(lists), tuple(templates), tuple(rendered))


def _check_params(vlist: VariantList, template: Template) -> None:
    tname = template.path.name
    # A placeholder that no variant sets is most likely a typo in the template, so it is reported
    # as such before blaming each variant.
    set_anywhere = {key for v in vlist.variants for key, _ in v.params}
    unknown = sorted(template.placeholders - set_anywhere)
    if unknown:
        raise ShaderGenError(f"{template.path}: unknown placeholder {{{{{unknown[0]}}}}}: no "
                             f"variant in {vlist.path} sets it")
    for variant in vlist.variants:
        where = f"{vlist.path}: variant '{variant.name}' ({variant.origin})"
        keys = {key for key, _ in variant.params}
        missing = sorted(template.placeholders - keys)
        if missing:
            raise ShaderGenError(f"{where}: missing parameter '{missing[0]}' for placeholder "
                                 f"{{{{{missing[0]}}}}} of {tname}")
        unused = sorted(keys - template.placeholders)
        if unused:
            raise ShaderGenError(f"{where}: unused parameter '{unused[0]}': {tname} has no "
                                 f"{{{{{unused[0]}}}}}")
