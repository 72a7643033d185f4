"""What a rule is: a small class with its docs and examples, and a `check` that queries the model.

Rules speak in syntax nodes; the engine turns nodes into positions once, for the files that have
findings, so rules never compute positions themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

import libcst as cst

from advisor.findings import Applicability, Fixable, Severity
from advisor.model import FileModel, Heat


@dataclass(frozen=True)
class NodeEdit:
    """An edit anchored to a node: insert text before or after it, or replace it.

    ``line_before`` inserts ``content`` as a new line above the statement ``node`` starts,
    with the statement's own indentation. With ``align``, each line break in ``content``
    starts a line that lines up with the column where ``align`` starts (a new argument under
    the others), in the file's own line ending.
    """

    node: cst.CSTNode
    content: str
    where: str = "replace"  # "replace" | "before" | "after" | "line_before"
    align: Optional[cst.CSTNode] = None


@dataclass(frozen=True)
class FixSpec:
    message: str
    edits: Tuple[NodeEdit, ...]
    applicability: Applicability = Applicability.SAFE


# Another node a finding points at, and what it is there ("epoch loop"): shown beside the
# finding by the outputs that can (SARIF relatedLocations, the editor's related information).
Related = Tuple[cst.CSTNode, str]


@dataclass
class Report:
    """A finding as a rule produces it, before positions are attached.

    The message is a template formatted from ``data``, the values the rule found, by name
    (`{call}`), and from the rows of the related locations by label (`{line[epoch loop]}`).
    ``data`` holds plain JSON values: outputs and the runtime probes read them, never the
    message. ``hint``, when given, is this finding's own advice, formatted from ``data`` the
    same way; otherwise the rule's hint applies.
    """

    rule: "Rule"
    node: cst.CSTNode
    template: str
    severity: Severity
    fix: Optional[FixSpec] = None
    data: Dict[str, Any] = field(default_factory=dict)
    related: Sequence[Related] = ()
    hint: Optional[str] = None

    def message(self, rows: Mapping[str, int]) -> str:
        """The message, given the row of each related location by its label."""
        return self.template.format_map(_Fields(self.rule.code, self.data, line=rows))

    def finding_hint(self) -> str:
        return self.rule.hint if self.hint is None else self.hint.format_map(_Fields(self.rule.code, self.data))


class _Fields(dict):
    """A template's values: a field the rule did not give is an error that names the rule, not
    a bare KeyError."""

    def __init__(self, code: str, data: Mapping[str, Any], **extra: Any) -> None:
        super().__init__(data)
        self.update(extra)
        self.code = code

    def __missing__(self, key: str) -> Any:
        raise KeyError(f"a {self.code} report's template uses {{{key}}}, which its data does not hold")


class Rule:
    """A rule and its documentation. The docs fields are rendered by advisor/rule_docs.py (for
    `advisor explain`, `advisor rules`, the docs site, hovers and SARIF); each must say something."""

    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity] = Severity.WARNING
    summary: ClassVar[str]  # one line, for `advisor rules`
    what: ClassVar[str]  # what it finds
    why: ClassVar[str]  # why it costs
    example: ClassVar[str]
    instead: ClassVar[str]  # the fixed example
    hint: ClassVar[str]  # one-line advice shown with each finding
    fixable: ClassVar[Fixable] = Fixable.NO
    # When the fix keeps the program's meaning, what it assumes, and when it is offered as
    # unsafe or not at all; for a rule without a fix, why the change is left to the author.
    fix_safety: ClassVar[str]
    # (title, https URL) of the PyTorch documentation and sources behind the advice.
    references: ClassVar[Tuple[Tuple[str, str], ...]] = ()
    # Every group must have one of its strings in the file, or the rule cannot fire there.
    requires: ClassVar[Tuple[Tuple[str, ...], ...]] = ()

    @property
    def family(self) -> str:
        """The package the rule lives in: sync, pipeline, precision, memory, distributed, ..."""
        return family_of(type(self))

    def url_for(self, docs_url: Optional[str]) -> Optional[str]:
        """The rule's page under a configured `docs-url` ("https://host/rules/{code}", or a base
        the lower-case code is appended to); None when none is configured: the pages in this
        repository are no address a user's tools can open."""
        if not docs_url:
            return None
        if "{code}" in docs_url:
            return docs_url.replace("{code}", self.code.lower())
        return f"{docs_url.rstrip('/')}/{self.code.lower()}"

    def applies_to(self, text: str) -> bool:
        return all(any(s in text for s in group) for group in self.requires)

    def check(self, model: FileModel) -> Iterator[Report]:
        raise NotImplementedError

    def report(
        self,
        node: cst.CSTNode,
        message: str,
        *,
        severity: Optional[Severity] = None,
        fix: Optional[FixSpec] = None,
        data: Optional[Dict[str, Any]] = None,
        related: Sequence[Related] = (),
        hint: Optional[str] = None,
    ) -> Report:
        """``message`` is a template: `{name}` fields come from ``data``, `{line[label]}` is the
        row of the related location with that label."""
        return Report(self, node, message, severity or self.severity, fix, data or {}, related, hint)

    def severity_for(self, heat: Heat) -> Severity:
        """Per-step findings under a periodic or rank-0 condition drop to info (also in the body
        of a rarely true test: a sanity check of values, an empty input, `if step == 0:`, a flag
        the block turns off). The host-sync rules ask `sync_heat`, for which a rank-0 test
        alone does not gate."""
        return Severity.INFO if heat is Heat.GATED else self.severity


@dataclass
class RuleSet:
    rules: List[Rule] = field(default_factory=list)

    def by_code(self, code: str) -> Optional[Rule]:
        for rule in self.rules:
            if rule.code == code.upper():
                return rule
        return None


def family_of(rule_class: type) -> str:
    """`advisor.rules.sync.item_in_training_loop` -> "sync"; a rule defined elsewhere (a test)
    takes its module's last segment."""
    parts = rule_class.__module__.split(".")
    if parts[:2] == ["advisor", "rules"] and len(parts) > 3:
        return parts[2]
    return parts[-1]


def snippet(model: FileModel, node: cst.CSTNode, limit: int = 40) -> str:
    """The node's source on one line, shortened for messages."""
    text = " ".join(model.code(node).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
