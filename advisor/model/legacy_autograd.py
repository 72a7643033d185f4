"""Code written for PyTorch 0.3, where `Variable(x, volatile=True)` turned autograd off.

PyTorch 0.4 replaced the flag with `torch.no_grad()` and made it a no-op. A file reads as
0.3 code when it takes scalars as `loss.data[0]` and uses none of the 0.4 idioms (`.item()`,
`no_grad`, `inference_mode`) nor tests the version. A file that says nothing either way (a
pruning script that only evaluates with volatile inputs) follows its project: 0.3 code when
some file of its folder reads `.data[0]` and none there uses a 0.4 idiom (the nearest folder up
to the project's root that shows either: one project may keep 0.3 and 0.4 experiments side by
side)."""
from __future__ import annotations

import os
import re
from typing import Optional, Set

import libcst as cst

from advisor.model.names import dotted_name

_NEWER_IDIOMS = (".item()", "no_grad", "inference_mode")
_VERSION = "torch.__version__"
_OLD_SCALAR = ".data[0]"


def written_for_torch_03(model) -> bool:
    """The file (or, when it shows neither, its project) is written for PyTorch 0.3."""
    text = model.text or ""
    if _shows_newer_torch(text):
        return False
    if _OLD_SCALAR in text and _reads_old_scalar(text):
        return True
    return model.shared("project-written-for-torch-03", _project_written_for_03)


# `.data[0]` used as a number: not `out.data[0].numpy()` nor `x.data[0][1]`, which take a row of
# a batch (what any torch does), only where the result itself is the value.
_SCALAR_READ = re.compile(r"\.data\[0\](?!\s*[.\[])")


# A line that tests the version (`if torch.__version__ < "0.4":`, `LooseVersion(torch.__version__)`),
# not one that only prints it (`log("torch {}".format(torch.__version__))`).
_VERSION_TEST = re.compile(r"^.*torch\.__version__.*(?:[<>]|==|!=|startswith|parse\(|Version\().*$", re.MULTILINE)


def _shows_newer_torch(text: str) -> bool:
    if any(idiom in text for idiom in _NEWER_IDIOMS):
        return True
    return _VERSION in text and _VERSION_TEST.search(text) is not None


def _reads_old_scalar(text: str) -> bool:
    return _SCALAR_READ.search(text) is not None


def _project_written_for_03(model) -> bool:
    project = model.project
    if project is None or model.real_path is None:
        return False
    python = lambda paths: [os.path.abspath(p) for p in paths if p.endswith(".py")]  # noqa: E731
    old = python(p for p in project.files_containing(_OLD_SCALAR) if _reads_old_scalar(project.text_of(p)))
    if not old:
        return False
    new = [path for idiom in _NEWER_IDIOMS for path in python(project.files_containing(idiom))]
    new += [path for path in python(project.files_containing(_VERSION)) if _shows_newer_torch(project.text_of(path))]
    root = os.path.abspath(project.layout.root)
    folder = os.path.dirname(os.path.abspath(model.real_path))
    while True:
        inside = lambda paths: any(p.startswith(folder + os.sep) for p in paths)  # noqa: E731
        shows_old, shows_new = inside(old), inside(new)
        if shows_old or shows_new:
            return shows_old and not shows_new
        if folder == root or not folder.startswith(root):
            return False
        folder = os.path.dirname(folder)


def old_scalar_read(model, subscript: cst.Subscript) -> Optional[cst.BaseExpression]:
    """What `loss.data[0]` reads back: up to torch 0.4 a one-element tensor's `.data[0]` was the
    way to take its number (0.4 warned and still did; `.item()` replaced it), a copy to the host
    that waits for the GPU. None for any other subscript, and for one whose result is indexed
    or called on (a row of a batch, `out.data[0].cpu()`)."""
    value = subscript.value
    if type(value) is not cst.Attribute or value.attr.value != "data" or len(subscript.slice) != 1:
        return None
    index = subscript.slice[0].slice
    if type(index) is not cst.Index or type(index.value) is not cst.Integer or index.value.value != "0":
        return None
    if id(subscript) in _used_as_tensor(model):
        return None
    # From 0.5 on this raises for a one-number tensor, so code that reads a loss this way runs
    # on 0.4 or older, whatever else the file shows: no file-wide era test is needed. Whether
    # the receiver is one number is the rule's question (`scalar`).
    return value.value


def scalar(model, expr: cst.BaseExpression, ctx, order: float, depth: int = 0) -> bool:
    """A one-number value, as far as the code shows: a full reduction (`x.sum()`, `x.mean()`), a
    loss (a name that says so, or a criterion's result). `output.data[0]` of a batch's output is
    its first row, no number."""
    if type(expr) is cst.Call and type(expr.func) is cst.Attribute:
        return expr.func.attr.value in _REDUCTIONS and not expr.args
    if type(expr) is cst.Call:
        return _loss_name(dotted_name(expr.func))
    name = dotted_name(expr)
    if name is None:
        return False
    if _loss_name(name):
        return True
    if depth > 1 or "." in name:
        return False
    found = model.reaching(name, ctx, order)
    return bool(found) and all(a.value is not None and a.index is None and scalar(model, a.value, a.ctx, a.order, depth + 1)
                               for a in found)


_REDUCTIONS = frozenset({"sum", "mean", "norm"})


def _loss_name(name: Optional[str]) -> bool:
    last = (name or "").rsplit(".", 1)[-1].lower()
    return "loss" in last or "criterion" in last or last in ("cross_entropy", "nll", "mse")


def _used_as_tensor(model) -> Set[int]:
    """Subscripts whose result is itself indexed, sliced or has an attribute taken."""

    def build(model) -> Set[int]:
        out: Set[int] = set()
        for subscript, _ in model.facts.subscripts:
            if type(subscript.value) is cst.Subscript:
                out.add(id(subscript.value))
        for sites in model.facts.calls_by_method.values():
            out.update(id(site.receiver) for site in sites if site.receiver is not None)
        return out

    return model.shared("subscripts-used-as-tensors", build)


def written_for_old_torch(model) -> bool:
    """The file can only run on a torch older than 1.0: it is Python 2 or spells
    `non_blocking` as `async=` (read lifted, advisor/old_syntax.py), or reads scalars as
    `loss.data[0]`. Advice that needs a newer torch (`persistent_workers`, 1.7) cannot apply."""
    text = model.text or ""
    return (model.lifted_text is not None or written_for_torch_03(model)
            or (_OLD_SCALAR in text and _LOSS_READ.search(text) is not None))


# A loss read the old way (`rl_loss_temp += loss.data[0]`, `lm_loss.sum().data[0]`): from torch 0.5
# on this raises, so a file that does it runs on 0.4 at the latest, `.item()` beside it or not.
_LOSS_READ = re.compile(r"loss\w*(?:\.sum\(\)|\.mean\(\))?\.data\[0\](?!\s*[.\[])")
