"""Methods that nothing in the project calls: a `per_decode` kept beside the `decode` every
caller uses, a `generate_point_cloud` whose only call was commented out. What their bodies do
costs no run of the project anything, so the engine reports it at info, as it does for classes
nothing builds (`model/unbuilt_classes.py`).

A method counts as uncalled only when every way of reaching it is ruled out:

- its name is a word nowhere else in its own file (comments and sentences in strings blanked:
  `# self.generate_point_cloud(loader)` calls nothing), nor in any file, config file or launch
  text its result depends on (`ProjectView.dependencies`: what imports the module and what it
  imports, a few steps either way), where a call, an override in a subclass, a string naming it
  for `getattr` or a callback handed by name would all show it;
- its class derives from nothing but `object`, `abc.ABC`, `nn.Module` or classes of the project
  that do too: a library base (a Lightning module, a Hugging Face trainer, a dataset) calls the
  hooks it defines by their names, out of sight. Of an `nn.Module`, the names torch itself calls
  or offers (`forward`, `extra_repr`, `_load_from_state_dict`, every name starting with `_`) are
  kept;
- it is no special method (`__call__`, `__getitem__`), and carries no decorator but the plain
  ones (`staticmethod`, `classmethod`, `property`, `torch.no_grad`): a registering decorator
  hands it to a caller by reference;
- the file does not look itself up by name (`globals()`, `eval`) nor fetch an attribute of
  `self` by a computed name (`getattr(self, f"{mode}_step")`), and no file near it fetches an
  attribute by a name it makes from pieces (`getattr(vae, args.decoder + "_decode")`);
- the file is not in a package others install (a library's methods are called by its users),
  unless it sits in a copy of another project (a folder with a licence of its own).

Only the files the check depends on are read, so a cached answer and a fresh one agree."""

from __future__ import annotations

import os
import re
from typing import Callable, List, Optional, Set, Tuple

import libcst as cst

from advisor.model.names import dotted_name
from advisor.model.prose import without_prose
from advisor.project.layout import vendored

Rows = Callable[[cst.CSTNode], Tuple[int, int]]

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# The file reads its own namespace by name: any class or method may be reached from a string.
# (Not `model.eval()`: a method of that name is no lookup.)
SELF_LOOKUP = re.compile(r"(?<![.\w])(?:globals\(\)|eval\(|exec\(|vars\(\)|locals\(\))|sys\.modules")
# `getattr(self, name)`, `getattr(self, f"{mode}_step")`: a method fetched by a computed name.
_COMPUTED_SELF_ATTRIBUTE = re.compile(r"getattr\(\s*self\s*,\s*(?!['\"][\w.]*['\"]\s*[,)])")
_PLAIN_BASES = frozenset({"object", "abc.ABC", "ABC"})
_MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module", "nn.Module", "Module"})
_PLAIN_DECORATORS = frozenset({
    "staticmethod", "classmethod", "property", "torch.no_grad", "torch.inference_mode", "torch.enable_grad",
    "functools.cached_property", "cached_property",
})
# What torch.nn.Module defines or calls by name on a subclass (public names; the private ones
# all start with `_`), and the initialiser torch's own layers and `to_empty` users call.
_MODULE_NAMES = frozenset({
    "add_module", "apply", "bfloat16", "buffers", "children", "compile", "cpu", "cuda", "double", "eval",
    "extra_repr", "float", "forward", "get_buffer", "get_extra_state", "get_parameter", "get_submodule", "half",
    "ipu", "load_state_dict", "modules", "mtia", "named_buffers", "named_children", "named_modules",
    "named_parameters", "parameters", "register_backward_hook", "register_buffer", "register_forward_hook",
    "register_forward_pre_hook", "register_full_backward_hook", "register_full_backward_pre_hook",
    "register_load_state_dict_post_hook", "register_load_state_dict_pre_hook", "register_module",
    "register_parameter", "register_state_dict_post_hook", "register_state_dict_pre_hook", "requires_grad_",
    "set_extra_state", "set_submodule", "share_memory", "state_dict", "to", "to_empty", "train", "type", "xpu",
    "zero_grad", "reset_parameters",
})


def uncalled_method_rows(model, rows: Rows) -> List[Tuple[int, int]]:
    """The first and last rows of the methods of the file's top-level classes that nothing in
    the project calls (see the module's docstring)."""
    project, path, text = model.project, model.real_path, model.text
    if project is None or path is None or not text or SELF_LOOKUP.search(text) or _COMPUTED_SELF_ATTRIBUTE.search(text):
        return []
    if (project.layout.installable() and os.path.isfile(os.path.join(os.path.dirname(path), "__init__.py"))
            and not vendored(path, project.layout.root)):
        return []  # a package others install: its methods are called by their code
    candidates: List[cst.FunctionDef] = []
    for statement in model.module.body:
        if type(statement) is not cst.ClassDef:
            continue
        info = model.facts.classes.get(statement.name.value)
        if info is None or info.node is not statement:
            continue
        module = _plain_class(model, info, 0)
        if module is None:
            continue
        for member in statement.body.body:
            if type(member) is cst.FunctionDef and _plain_method(model, member, module):
                candidates.append(member)
    if not candidates:
        return []
    own = _word_counts(without_prose(text))
    nearby: Optional[Set[str]] = None
    found = []
    for method in candidates:
        name = method.name.value
        if own.get(name, 0) > 1:
            continue  # named in its own file beyond its `def`
        if nearby is None:
            nearby = set(project.dependencies(path)) | set(project.layout.launch_texts() or ())
            nearby.discard(path)
            if any(p.endswith(".py") and project.makes_attribute_names(p) for p in nearby):
                return []  # a file near it fetches attributes by names it makes
        if any(other in nearby and (not other.endswith(".py") or name in project.code_words(other))
               for other in project.files_naming(name)):
            continue
        found.append(rows(method))
    return found


def _word_counts(code: str) -> dict:
    counts: dict = {}
    for word in _WORD.findall(code):
        counts[word] = counts.get(word, 0) + 1
    return counts


def _plain_class(model, info, depth: int) -> Optional[bool]:
    """Whether the class is an `nn.Module` (True) or a plain class (False), when every base is
    one of those or a project class that is; None when some base is a library's."""
    module = False
    for base in info.bases:
        if base in _PLAIN_BASES:
            continue
        if base in _MODULE_BASES:
            module = True
            continue
        if depth >= 4:
            return None
        local = model.facts.classes.get(base)
        if local is not None and local is not info:
            found = _plain_class(model, local, depth + 1)
        else:
            symbol = model.symbol(base)
            if symbol is None or symbol.kind != "class" or symbol.info is None:
                return None
            found = _plain_class(symbol.model, symbol.info, depth + 1)
        if found is None:
            return None
        module = module or found
    return module


def _plain_method(model, method: cst.FunctionDef, module: bool) -> bool:
    name = method.name.value
    if name.startswith("__") and name.endswith("__"):
        return False
    if module and (name.startswith("_") or name in _MODULE_NAMES):
        return False
    for decorator in method.decorators:
        expr = decorator.decorator
        if type(expr) is cst.Call:
            expr = expr.func
        qualified = model.imports.qualify(expr) or dotted_name(expr)
        if qualified not in _PLAIN_DECORATORS:
            return False
    return True
