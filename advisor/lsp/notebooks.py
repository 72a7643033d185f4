"""Notebook documents (`notebookDocument/*`): the code cells checked as one program.

pygls keeps the notebook's structure and its cells' text (its built-in handlers run before
ours). On every open or change the python code cells are joined as `advisor check` joins a
.ipynb file's cells (advisor.notebook: magics become placeholders, rows map back to cells),
checked once on the analysis thread, and each cell gets the diagnostics that fall in it: pushed
per cell URI, or returned when a pull client asks for a cell. A finding whose fix stays in its
own cell carries it, so the cell gets the same quick fix, noqa action and hover as a file
(fix-all stays with files: the CLI's `--fix` rewrites a notebook whole).

A notebook is checked in its folder's project, on the same worker and project views as files,
so it reads the open documents' buffers; it is checked again when a file it depends on is
edited (see server.py).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from lsprotocol import types

from advisor.suppression import check_text
from advisor.findings import Finding
from advisor.lsp import convert
from advisor.lsp.documents import Document
from advisor.notebook import build_program, cell_fix, problem_to_cells, to_cells

log = logging.getLogger("advisor.lsp")

SYNC_OPTIONS = types.NotebookDocumentSyncOptions(
    notebook_selector=[
        types.NotebookDocumentFilterWithCells(cells=[types.NotebookCellLanguage(language="python")], notebook="*")
    ]
)


@dataclass
class NotebookAnalysis:
    key: Tuple
    diagnostics: Dict[str, List[types.Diagnostic]]  # cell URI -> its diagnostics
    findings: Dict[str, List[Finding]]  # cell URI -> its findings, in cell rows (for hover)
    dependencies: Tuple[str, ...] = ()  # the project files its findings may depend on


def code_cells(ls, notebook: types.NotebookDocument) -> List[Tuple[int, str, str, Optional[int]]]:
    """(1-based cell number, cell URI, text, version) of each python code cell."""
    cells = []
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.kind != types.NotebookCellKind.Code:
            continue
        doc = ls.workspace.get_text_document(cell.document)
        if (doc.language_id or "python") != "python":
            continue
        cells.append((number, cell.document, doc.source, doc.version))
    return cells


class Notebooks:
    def __init__(self) -> None:
        self._latest: Dict[str, NotebookAnalysis] = {}
        self._pushes: Dict[str, asyncio.Task] = {}
        self.published: Dict[str, List[str]] = {}  # notebook URI -> cell URIs last pushed to

    def forget(self, uri: str) -> None:
        self._latest.pop(uri, None)
        task = self._pushes.pop(uri, None)
        if task is not None:
            task.cancel()

    async def analyse(self, ls, uri: str) -> Optional[NotebookAnalysis]:
        notebook = ls.workspace.get_notebook_document(notebook_uri=uri)
        if notebook is None:
            return None
        cells = code_cells(ls, notebook)
        key = (notebook.version, tuple((c[1], c[3]) for c in cells), ls.resolver.generation, ls._settings_generation,
               ls._dependency_generation.get(uri, 0))
        cached = self._latest.get(uri)
        if cached is not None and cached.key == key:
            return cached
        path = convert.uri_path(uri)
        config, _ = ls.resolver.for_path(path, ls.settings)
        filename = str(path) if path is not None else uri
        encoding, docs_url = ls.encoding, ls.settings.docs_url
        related_information = ls.related_information
        hrefs = {}

        def href(code: str) -> Optional[str]:
            if code not in hrefs:
                hrefs[code] = ls.links.href(code, docs_url)
            return hrefs[code]

        stand_ins = ls.stand_ins()

        def work() -> NotebookAnalysis:
            by_number = {number: (cell_uri, text, version) for number, cell_uri, text, version in cells}
            out: Dict[str, List[types.Diagnostic]] = {cell_uri: [] for _, cell_uri, _, _ in cells}
            found: Dict[str, List[Finding]] = {cell_uri: [] for _, cell_uri, _, _ in cells}
            if path is not None and config.is_excluded(path):
                return NotebookAnalysis(key, out, found)
            program = build_program([(number, text) for number, _, text, _ in cells])
            views = ls.analyzer.views(ls.analyzer._executor, stand_ins)
            result = check_text(program.text, filename, config, path=path, views=views)
            lines_of_cell = {number: convert.lines_of(text) for number, _, text, _ in cells}

            def locate(related):  # a related place sits in its own cell's document
                if related.cell not in by_number:
                    return None
                return by_number[related.cell][0], lines_of_cell[related.cell]
            for finding in result.findings:
                local = to_cells(program, finding)
                if local.cell not in by_number:
                    continue
                cell_uri, text, version = by_number[local.cell]
                local = local.replace(fix=cell_fix(program, finding))
                # The cell's version goes with the fix: offered only while the cell is unchanged.
                out[cell_uri].append(convert.diagnostic(local, lines_of_cell[local.cell], encoding, version,
                                                        href(local.code), locate if related_information else None))
                found[cell_uri].append(local)
            if result.problem is not None:
                problem = problem_to_cells(program, result.problem)
                if problem.cell in by_number:
                    cell_uri, text, _ = by_number[problem.cell]
                    out[cell_uri].append(convert.problem_diagnostic(problem, convert.lines_of(text), encoding))
            return NotebookAnalysis(key, out, found, tuple(result.dependencies or ()))

        loop = asyncio.get_running_loop()
        analysis = await loop.run_in_executor(ls.analyzer._executor, work)
        self._latest[uri] = analysis
        return analysis

    def schedule_push(self, ls, uri: str, delay_ms: int) -> None:
        previous = self._pushes.pop(uri, None)
        if previous is not None:
            previous.cancel()
        self._pushes[uri] = asyncio.ensure_future(self._push_later(ls, uri, delay_ms))

    async def _push_later(self, ls, uri: str, delay_ms: int) -> None:
        try:
            if delay_ms:
                await asyncio.sleep(delay_ms / 1000)
            analysis = await self.analyse(ls, uri)
        except asyncio.CancelledError:
            return
        except Exception:  # noqa: BLE001 - one failed analysis must not stop the server
            log.exception("analysis of notebook %s failed", uri)
            return
        if analysis is None:
            return
        # Cells removed since the last push get their diagnostics cleared.
        for cell_uri in self.published.get(uri, []):
            if cell_uri not in analysis.diagnostics:
                ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell_uri, diagnostics=[]))
        for cell_uri, diagnostics in analysis.diagnostics.items():
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell_uri, diagnostics=diagnostics))
        self.published[uri] = list(analysis.diagnostics)

    async def pulled(self, ls, cell_uri: str) -> Optional[List[types.Diagnostic]]:
        """A pull client's diagnostics for one cell; None if the URI is no notebook's cell."""
        notebook = ls.workspace.get_notebook_document(cell_uri=cell_uri)
        if notebook is None:
            return None
        analysis = await self.analyse(ls, notebook.uri)
        if analysis is None:
            return []
        return analysis.diagnostics.get(cell_uri, [])

    def cell(self, ls, cell_uri: str) -> Optional[Tuple[Document, List[Finding]]]:
        """A notebook cell as a document (its text and version now), with the findings of the
        notebook's latest analysis that fall in it; None if the URI is no open notebook's cell."""
        notebook = ls.workspace.get_notebook_document(cell_uri=cell_uri)
        if notebook is None:
            return None
        text_document = ls.workspace.get_text_document(cell_uri)
        analysis = self._latest.get(notebook.uri)
        findings = analysis.findings.get(cell_uri, []) if analysis is not None else []
        return Document(cell_uri, text_document.source, text_document.version), findings

    def depending_on(self, path: str, dependencies: Tuple[str, ...]) -> List[str]:
        """The open notebooks whose last analysis may depend on the file ``path`` (whose own
        dependencies are ``dependencies``)."""
        out = []
        for uri, analysis in self._latest.items():
            own = convert.uri_path(uri)
            if path in analysis.dependencies or (own is not None and str(own) in dependencies):
                out.append(uri)
        return out

    def changed(self, ls, uri: str, delay_ms: int) -> None:
        if ls.pull:
            if ls._capability("workspace", "diagnostics", "refresh_support"):
                ls.workspace_diagnostic_refresh(None)  # a change in one cell can move findings in others
        else:
            self.schedule_push(ls, uri, delay_ms)

    def closed(self, ls, uri: str) -> None:
        self.forget(uri)
        for cell_uri in self.published.pop(uri, []):
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell_uri, diagnostics=[]))
