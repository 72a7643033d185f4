"""Whether the project's text calls a function by its name, wherever the call graph lost track.

The value flow takes "no call of the project is seen" as "nobody calls it" only for questions
that ask how the project's own code runs (`Question.uncalled_default`). A call the graph could
not resolve (`self.init_encoder(...)` from a subclass in another file, `obj.build(...)` of an
object it cannot type) still says somebody does: this is the check that it is absent. Read from
the file's own text and the project files near it (those a cached answer depends on).
"""

from __future__ import annotations

import os
import re
from typing import Dict

from advisor.model.prose import without_prose


def called_by_name(model, info) -> bool:
    """``name(`` appears somewhere other than its own `def`/`class` line: for `__init__`, the
    class's name, or `cls(...)`/`type(self)(...)` in a file that defines the class or a
    subclass of it (a classmethod there builds an instance, as a `from_config` does)."""
    building = info.node.name.value == "__init__" and info.class_name is not None
    name = info.class_name if building else info.node.name.value
    known: Dict[str, bool] = model.shared("called-by-name", lambda m: {})
    answer = known.get(name)
    if answer is None:
        answer = known[name] = _called(model, name, building)
    return answer


def _called(model, name: str, building: bool) -> bool:
    call = re.compile(r"(?<![\w])(?<!def )(?<!class )%s\s*\(" % re.escape(name))
    made = re.compile(r"(?<![\w.])cls\s*\(|type\(self\)\s*\(")
    # A file that defines a function or class of the same name calls its own.
    defines = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+%s\b" % re.escape(name), re.MULTILINE)

    # A class of the file that is this class or one of its subclasses: a classmethod there may
    # build it (`cls(...)` in `MiniGPT4.from_config`, a subclass of `MiniGPTBase`).
    related = re.compile(r"^\s*class\s+(?:%s\b|\w+\s*\([^)]*\b%s\b)" % (re.escape(name), re.escape(name)), re.MULTILINE)

    # Code only: a docstring's example (`>>> self = LiteHRNet(extra)`) or a comment builds
    # nothing. Each file is cleaned once for all the names asked about.
    cleaned: Dict[str, str] = model.shared("prose-free-texts", lambda m: {})

    def code_of(key: str, text: str) -> str:
        found = cleaned.get(key)
        if found is None:
            found = cleaned[key] = without_prose(text)
        return found

    def calls(text: str, own: bool) -> bool:
        if building and made.search(text) and (own or related.search(text)):
            return True
        return bool(call.search(text)) and (own or not defines.search(text))

    if calls(code_of("", model.text or ""), True):
        return True
    project = model.project
    if project is None or model.real_path is None:
        return False
    nearby = {os.path.normpath(os.path.abspath(p)) for p in project.dependencies(model.real_path)}
    candidates = set(project.files_containing(name))
    if building:
        candidates.update(project.files_containing("cls("), project.files_containing("type(self)("))
    return any(
        os.path.normpath(os.path.abspath(path)) in nearby and calls(code_of(path, project.text_of(path)), False)
        and not test_of(project, path, model)
        for path in sorted(candidates)
    )


def test_of(project, path: str, model) -> bool:
    """``path`` is a test module and ``model`` is not: a test's calls are not runs the project
    makes (`ResNet(18, with_cp=True)` in tests/)."""
    if model.is_test_code:
        return False
    other = project.model(path)
    return other is not None and other.is_test_code
