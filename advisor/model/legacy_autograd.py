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

_NEWER_IDIOMS = (".item()", "no_grad", "inference_mode", "torch.__version__")
_OLD_SCALAR = ".data[0]"


def written_for_torch_03(model) -> bool:
    """The file (or, when it shows neither, its project) is written for PyTorch 0.3."""
    text = model.text or ""
    if any(idiom in text for idiom in _NEWER_IDIOMS):
        return False
    if _OLD_SCALAR in text:
        return True
    return model.shared("project-written-for-torch-03", _project_written_for_03)


def _project_written_for_03(model) -> bool:
    project = model.project
    if project is None or model.real_path is None:
        return False
    python = lambda paths: [os.path.abspath(p) for p in paths if p.endswith(".py")]  # noqa: E731
    old = python(project.files_containing(_OLD_SCALAR))
    if not old:
        return False
    new = [path for idiom in _NEWER_IDIOMS for path in python(project.files_containing(idiom))]
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
