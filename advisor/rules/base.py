"""What a rule is: a small class with its docs and examples, and a `check` that queries the model.

Rules speak in syntax nodes; the engine turns nodes into positions once, for the files that have
findings, so rules never compute positions themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Iterator, List, Optional, Tuple

import libcst as cst

from advisor.findings import Applicability, Fixable, Severity
from advisor.model import FileModel, Heat


@dataclass(frozen=True)
class NodeEdit:
    """An edit anchored to a node: insert text before or after it, or replace it.

    ``line_before`` inserts ``content`` as a new line above the statement ``node`` starts,
    with the statement's own indentation.
    """

    node: cst.CSTNode
    content: str
    where: str = "replace"  # "replace" | "before" | "after" | "line_before"


@dataclass(frozen=True)
class FixSpec:
    message: str
    edits: Tuple[NodeEdit, ...]
    applicability: Applicability = Applicability.SAFE


@dataclass
class Report:
    """A finding as a rule produces it, before positions are attached."""

    rule: "Rule"
    node: cst.CSTNode
    message: str
    severity: Severity
    fix: Optional[FixSpec] = None
    related: Optional[cst.CSTNode] = None  # its line replaces "{line}" in the message


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
    ) -> Report:
        return Report(self, node, message, severity or self.severity, fix)

    def severity_for(self, heat: Heat) -> Severity:
        """Per-step findings under a periodic or rank-0 condition drop to info."""
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
