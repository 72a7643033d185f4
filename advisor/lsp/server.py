"""`advisor lsp`: the pygls server, wiring protocol messages to documents, analysis and actions.

Diagnostics are pulled (textDocument/diagnostic) by clients that advertise it and pushed
(textDocument/publishDiagnostics, with the document version) to the others. A push waits for
`debounceMs` after the last change and is dropped if the document moved on meanwhile.

Files are checked in their project, so an edit of one file can change the findings of another
(a helper becomes hot because of a loop in train.py). Once an edited file's own diagnostics are
out, the open files that depend on it (`Analysis.dependencies`, either way) are checked again
after `debounceMs`, one at a time, and their diagnostics re-published (pull clients are asked to
refresh). Any further edit drops what is left of that round, so the edited file never waits
behind its dependents; they are taken up again after its next analysis.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import Any, Dict, List, Optional, Set, Tuple

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from advisor import __version__
from advisor.findings import Applicability, Finding, Position
from advisor.limits import FileTooLarge, read_regular
from advisor.lsp import convert
from advisor.lsp.actions import (
    KIND_FIX_ALL, contains, fix_title, noqa_code_at, noqa_edit, noqa_title, unique,
)
from advisor.lsp.analysis import Analysis, Analyzer, Job, Superseded
from advisor.lsp.docs import DocsLinks, rule_markdown
from advisor.lsp.documents import Document, Documents
from advisor.lsp.notebooks import SYNC_OPTIONS as NOTEBOOK_SYNC
from advisor.lsp.notebooks import Notebooks
from advisor.lsp.protocol import AdvisorProtocol
from advisor.lsp.settings import RUN_ON_SAVE, ConfigResolver, Settings, parse_settings
from advisor.source import DecodeError, decode_source

log = logging.getLogger("advisor.lsp")

# How long the document must stay unchanged after a result moved from the previous version
# (lsp/comment_edits) before the server checks that version in full.
VERIFY_AFTER_SECONDS = 0.3


class AdvisorServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("torch-advisor", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         notebook_document_sync=NOTEBOOK_SYNC, protocol_cls=AdvisorProtocol)
        self.protocol._converter.register_unstructure_hook(types.Diagnostic, convert.diagnostic_json)
        self.documents = Documents()
        self.notebooks = Notebooks()
        self.analyzer = Analyzer()
        self.resolver = ConfigResolver()
        self.settings = Settings()
        self.links = DocsLinks()
        self.pull = False
        self._settings_generation = 0
        self._pushes: Dict[str, asyncio.Task] = {}
        self._shown_errors: Set[str] = set()
        # Re-checking the open files that depend on an edited one (see the module docstring).
        self._edits = 0  # changes of any document so far
        self._edited: Set[str] = set()  # documents changed since their dependents were re-checked
        self._stale: Set[str] = set()  # documents and notebooks to check again: a dependency changed
        self._dependency_generation: Dict[str, int] = {}
        self._recheck: Optional[asyncio.Task] = None

    # -- client facts ------------------------------------------------------------------------------
    @property
    def encoding(self) -> str:
        kind = self.workspace.position_encoding or types.PositionEncodingKind.Utf16
        return getattr(kind, "value", kind)

    def _capability(self, *names: str) -> Any:
        value: Any = self.client_capabilities
        for name in names:
            value = getattr(value, name, None)
            if value is None:
                return None
        return value

    @property
    def related_information(self) -> bool:
        """The client takes related places with its diagnostics (pushed or pulled)."""
        return bool(self._capability("text_document", "publish_diagnostics", "related_information")
                    or self._capability("text_document", "diagnostic", "related_information"))

    # -- settings and configuration ----------------------------------------------------------------
    def apply_settings(self, raw: Any) -> None:
        settings, errors = parse_settings(raw, self.settings)
        for error in errors:
            self.show_once(f"torch-advisor settings: {error}", types.MessageType.Warning)
        if settings != self.settings:
            self.settings = settings
            self._settings_generation += 1

    def show_once(self, message: str, kind: types.MessageType) -> None:
        log.warning("%s", message)
        if message not in self._shown_errors:
            self._shown_errors.add(message)
            self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def job(self, doc: Document, text: str, version: Optional[int]) -> Job:
        path = convert.uri_path(doc.uri)
        config, error = self.resolver.for_path(path, self.settings)
        if error:
            self.show_once(f"torch-advisor: {error} (using the defaults)", types.MessageType.Error)
        key = (version, self.resolver.generation, self._settings_generation, self._dependency_generation.get(doc.uri, 0))
        docs_url = self.settings.docs_url

        def wanted() -> bool:
            current = self.documents.get(doc.uri)
            if current is not doc:
                return False
            return (doc.saved_version if self.settings.run == RUN_ON_SAVE else doc.version) == version

        return Job(
            uri=doc.uri, text=text, version=version, key=key,
            filename=str(path) if path is not None else doc.uri, path=path, config=config,
            excluded=path is not None and config.is_excluded(path), encoding=self.encoding,
            href=lambda code: self.links.href(code, docs_url), wanted=wanted,
            related_information=self.related_information, stand_ins=_frozen(self.stand_ins()),
        )

    def stand_ins(self) -> Dict[str, str]:
        """The open Python documents' texts by path, as analysed (the saved ones in run-on-save
        mode). Taken on the event loop when a job is made, so that a worker never reads a
        document while an edit changes it."""
        out: Dict[str, str] = {}
        for doc in self.documents:
            if doc.path is not None and doc.language_id == "python":
                out[doc.path] = self.snapshot(doc)[0]
        return out

    def snapshot(self, doc: Document):
        if self.settings.run == RUN_ON_SAVE:
            return doc.saved_text, doc.saved_version
        return doc.text, doc.version

    def invalidate(self) -> None:
        """Configuration or settings changed: every open document is checked again."""
        for doc in self.documents:
            if self.pull:
                self.prestart(doc)
            else:
                self.schedule_push(doc, 0)
        if not self.pull:
            for uri in list(self.workspace.notebook_documents):
                self.notebooks.schedule_push(self, uri, 0)
        if self.pull and self._capability("workspace", "diagnostics", "refresh_support"):
            self.workspace_diagnostic_refresh(None)

    # -- diagnostics -------------------------------------------------------------------------------
    def schedule_push(self, doc: Document, delay_ms: int) -> None:
        previous = self._pushes.pop(doc.uri, None)
        if previous is not None:
            previous.cancel()
        self._pushes[doc.uri] = asyncio.ensure_future(self._push_later(doc, delay_ms))

    async def _push_later(self, doc: Document, delay_ms: int) -> None:
        try:
            if delay_ms:
                await asyncio.sleep(delay_ms / 1000)
            text, version = self.snapshot(doc)
            job = self.job(doc, text, version)
            analysis = await self.analyzer.analyse(job)
        except (asyncio.CancelledError, Superseded):
            return
        except Exception:  # noqa: BLE001 - one failed analysis must not stop the server
            log.exception("analysis of %s failed", doc.uri)
            return
        # Never publish for a version the client no longer has.
        if self.documents.get(doc.uri) is not doc or self.snapshot(doc)[1] != version:
            return
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=doc.uri, diagnostics=analysis.diagnostics, version=doc.version)
        )
        self.analysed(doc, analysis)
        await self._verify(doc, job, analysis)

    async def _verify(self, doc: Document, job, published) -> None:
        """After a result went out: the worker frees the previous model, and checks a reused
        result (analysis.Analyzer.verify) in full; a differing one is published in its place
        (push) or announced with a refresh (pull). A newer edit cancels it. The full check waits
        for a pause in typing (VERIFY_AFTER_SECONDS): while keystrokes come, each would only
        start it to be cancelled."""
        try:
            # A full result waits for the pause too: freeing its model is one collection of tens of
            # ms on a large file, which the next keystroke's diagnostics would wait behind.
            await asyncio.sleep(VERIFY_AFTER_SECONDS)
            if self.documents.get(doc.uri) is not doc or self.snapshot(doc)[1] != job.version:
                return
            checked = await self.analyzer.verify(job, published)
        except (asyncio.CancelledError, Superseded):
            return
        except Exception:  # noqa: BLE001 - one failed analysis must not stop the server
            log.exception("analysis of %s failed", doc.uri)
            return
        if checked is None or self.documents.get(doc.uri) is not doc or self.snapshot(doc)[1] != job.version:
            return
        if self.pull:
            if self._capability("workspace", "diagnostics", "refresh_support"):
                self.workspace_diagnostic_refresh(None)
            return
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=doc.uri, diagnostics=checked.diagnostics, version=doc.version)
        )

    def prestart(self, doc: Document) -> None:
        """Pull clients ask right after a change; starting now saves the wait."""
        text, version = self.snapshot(doc)
        future = asyncio.ensure_future(self._prestarted(doc, text, version))
        future.add_done_callback(_swallow)

    async def _prestarted(self, doc: Document, text: str, version: Optional[int]) -> None:
        job = self.job(doc, text, version)
        analysis = await self.analyzer.analyse(job)
        self.analysed(doc, analysis)
        await self._verify(doc, job, analysis)  # the client pulls it now: free the model after

    # -- files that depend on an edited one ------------------------------------------------------
    def edited(self, doc: Document) -> None:
        self._edits += 1
        self._edited.add(doc.uri)

    def analysed(self, doc: Document, analysis: Analysis) -> None:
        """``doc``'s analysis for its current version is done: if it was edited, the open files
        that depend on it are due for another check."""
        if doc.uri not in self._edited or self.documents.get(doc.uri) is not doc:
            return
        if self.snapshot(doc)[1] != analysis.version:
            return
        self._edited.discard(doc.uri)
        if doc.path is not None:
            self.dependents_changed(doc.path, analysis.dependencies, exclude=doc.uri)

    def dependents_changed(self, path: str, dependencies: Tuple[str, ...] = (), exclude: str = "") -> None:
        """The text of ``path`` changed: the open files and notebooks whose findings may depend
        on it (they name it among their dependencies, or it names them) are checked again."""
        due = []
        for other in self.documents:
            if other.uri == exclude or other.path is None:
                continue
            latest = self.analyzer.latest(other.uri)
            if latest is not None and (path in latest.dependencies or other.path in dependencies):
                due.append(other.uri)
        due += self.notebooks.depending_on(path, dependencies)
        if not due:
            return
        for uri in due:
            self._dependency_generation[uri] = self._dependency_generation.get(uri, 0) + 1
            self._stale.add(uri)
        if self._recheck is not None:
            self._recheck.cancel()
        self._recheck = asyncio.ensure_future(self._recheck_stale(self._edits))

    async def _recheck_stale(self, edits_at: int) -> None:
        """Checks the stale documents again, one at a time, while no document changes."""
        try:
            await asyncio.sleep(self.settings.debounce_ms / 1000)
        except asyncio.CancelledError:
            return
        refresh = False
        for uri in sorted(self._stale):
            if self._edits != edits_at:
                return
            doc = self.documents.get(uri)
            if doc is None:
                self._stale.discard(uri)
                if uri in self.workspace.notebook_documents:
                    if self.pull:
                        refresh = True
                    else:
                        self.notebooks.schedule_push(self, uri, 0)
                continue
            text, version = self.snapshot(doc)
            job = self.job(doc, text, version)
            job = replace(job, background=True, wanted=lambda job=job: job.wanted() and self._edits == edits_at)
            try:
                analysis = await self.analyzer.analyse(job)
            except (asyncio.CancelledError, Superseded):
                return
            except Exception:  # noqa: BLE001 - one failed analysis must not stop the server
                log.exception("analysis of %s failed", uri)
                self._stale.discard(uri)
                continue
            if self.documents.get(uri) is not doc or self.snapshot(doc)[1] != version:
                continue  # its own change brings its own diagnostics
            self._stale.discard(uri)
            if self.pull:
                refresh = True
            else:
                self.text_document_publish_diagnostics(
                    types.PublishDiagnosticsParams(uri=uri, diagnostics=analysis.diagnostics, version=doc.version)
                )
        if refresh and self._capability("workspace", "diagnostics", "refresh_support"):
            self.workspace_diagnostic_refresh(None)

    async def pulled(self, uri: str) -> Optional[Analysis]:
        analysis = None
        for _ in range(5):  # the document can change while it is analysed: analyse the new one
            doc = self.documents.get(uri)
            if doc is None:
                return None
            text, version = self.snapshot(doc)
            job = self.job(doc, text, version)
            try:
                analysis = await self.analyzer.analyse(job)
            except Superseded:
                continue
            if self.snapshot(doc)[1] == version:
                self.analysed(doc, analysis)
                future = asyncio.ensure_future(self._verify(doc, job, analysis))
                future.add_done_callback(_swallow)
                return analysis
        return analysis


def _same_as_disk(path: str, text: str) -> bool:
    """The file on disk holds ``text`` (decoded as the engine decodes it); False when it cannot
    be read."""
    try:
        data = read_regular(path, 4 * len(text) + 4096)[0]
        return decode_source(data).text == text
    except (OSError, ValueError, FileTooLarge, DecodeError):
        return False


def _frozen(texts: Dict[str, str]):
    return lambda: dict(texts)  # each analysis adds its own text to a copy


def _swallow(future: asyncio.Future) -> None:
    if not future.cancelled() and future.exception() is not None and not isinstance(future.exception(), Superseded):
        log.error("analysis failed", exc_info=future.exception())


def build_server() -> AdvisorServer:
    server = AdvisorServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: AdvisorServer, params: types.InitializeParams) -> None:
        ls.pull = ls._capability("text_document", "diagnostic") is not None
        ls.apply_settings(params.initialization_options)
        log.info("client %s: %s diagnostics, %s positions",
                 params.client_info.name if params.client_info else "?", "pull" if ls.pull else "push", ls.encoding)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: AdvisorServer, params: types.InitializedParams) -> None:
        if ls._capability("workspace", "did_change_watched_files", "dynamic_registration"):
            # pyproject.toml for the configuration; Python files for the project views (a
            # neighbour changed by git or another program is read again).
            registration = types.Registration(
                id="advisor-pyproject",
                method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(
                    watchers=[types.FileSystemWatcher(glob_pattern="**/pyproject.toml"),
                              types.FileSystemWatcher(glob_pattern="**/*.py")]
                ),
            )
            try:
                await asyncio.wait_for(
                    ls.client_register_capability_async(types.RegistrationParams(registrations=[registration])), 10
                )
            except Exception as exc:  # noqa: BLE001 - no watcher: pyproject mtimes still checked
                log.warning("could not register a pyproject.toml watcher: %s", exc)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: AdvisorServer, params: types.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        doc = ls.documents.open(item.uri, item.text, item.version, item.language_id)
        if doc.path is not None and not _same_as_disk(doc.path, doc.text):
            ls.edited(doc)  # an unsaved buffer restored: its dependents read it from now on
        if ls.pull:
            ls.prestart(doc)
        else:
            ls.schedule_push(doc, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: AdvisorServer, params: types.DidChangeTextDocumentParams) -> None:
        doc = ls.documents.get(params.text_document.uri)
        if doc is None:
            return
        doc.apply(params.content_changes, params.text_document.version, ls.encoding)
        if ls.settings.run == RUN_ON_SAVE:
            return
        ls.edited(doc)
        if ls.pull:
            ls.prestart(doc)
        else:
            ls.schedule_push(doc, ls.settings.debounce_ms)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: AdvisorServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri.endswith("/pyproject.toml"):
            ls.resolver.reload()
            ls.invalidate()
        doc = ls.documents.get(uri)
        if doc is None:
            return
        if params.text is not None:
            doc.text, doc._lines = params.text, None
        if ls.settings.run == RUN_ON_SAVE and doc.saved_text != doc.text:
            ls.edited(doc)
        doc.mark_saved()
        if ls.pull:
            if ls.settings.run == RUN_ON_SAVE and ls._capability("workspace", "diagnostics", "refresh_support"):
                ls.workspace_diagnostic_refresh(None)
        else:
            ls.schedule_push(doc, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: AdvisorServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        task = ls._pushes.pop(uri, None)
        if task is not None:
            task.cancel()
        doc = ls.documents.close(uri)
        latest = ls.analyzer.latest(uri)
        ls.analyzer.forget(uri)
        ls._edited.discard(uri)
        ls._stale.discard(uri)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        if doc is not None and doc.path is not None and not _same_as_disk(doc.path, ls.snapshot(doc)[0]):
            # Unsaved changes were dropped: the files that read them read the disk again.
            ls._edits += 1
            ls.dependents_changed(doc.path, latest.dependencies if latest is not None else ())

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_open(ls: AdvisorServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.notebooks.changed(ls, params.notebook_document.uri, 0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_change(ls: AdvisorServer, params: types.DidChangeNotebookDocumentParams) -> None:
        if ls.settings.run != RUN_ON_SAVE:
            ls.notebooks.changed(ls, params.notebook_document.uri, ls.settings.debounce_ms)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_save(ls: AdvisorServer, params: types.DidSaveNotebookDocumentParams) -> None:
        ls.notebooks.changed(ls, params.notebook_document.uri, 0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_close(ls: AdvisorServer, params: types.DidCloseNotebookDocumentParams) -> None:
        ls.notebooks.closed(ls, params.notebook_document.uri)

    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(identifier="advisor", inter_file_dependencies=True, workspace_diagnostics=False),
    )
    async def diagnostic(ls: AdvisorServer, params: types.DocumentDiagnosticParams):
        if ls.documents.get(params.text_document.uri) is None:
            cell = await ls.notebooks.pulled(ls, params.text_document.uri)
            if cell is not None:  # a notebook cell: checked with the notebook's other cells
                return types.FullDocumentDiagnosticReport(items=cell)
        analysis = await ls.pulled(params.text_document.uri)
        if analysis is None:
            return types.FullDocumentDiagnosticReport(items=[])
        if params.previous_result_id == analysis.result_id:
            return types.UnchangedDocumentDiagnosticReport(result_id=analysis.result_id)
        return types.FullDocumentDiagnosticReport(items=analysis.diagnostics, result_id=analysis.result_id)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, KIND_FIX_ALL]),
    )
    async def code_action(ls: AdvisorServer, params: types.CodeActionParams):
        doc = ls.documents.get(params.text_document.uri)
        if doc is not None:
            return await _code_actions(ls, doc, params)
        cell = ls.notebooks.cell(ls, params.text_document.uri)
        if cell is None:
            return None
        return await _code_actions(ls, cell[0], params, whole_file=False)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: AdvisorServer, params: types.HoverParams) -> Optional[types.Hover]:
        doc = ls.documents.get(params.text_document.uri)
        if doc is not None:
            analysis = ls.analyzer.latest(doc.uri)
            return _hover(ls, doc, params.position, analysis.findings if analysis is not None else [])
        cell = ls.notebooks.cell(ls, params.text_document.uri)
        if cell is None:
            return None
        return _hover(ls, cell[0], params.position, cell[1])

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: AdvisorServer, params: types.DidChangeWatchedFilesParams) -> None:
        if any(change.uri.endswith("pyproject.toml") for change in params.changes):
            log.info("pyproject.toml changed; reloading configuration")
            ls.resolver.reload()
            ls.analyzer.forget_views()
            ls.invalidate()
        open_paths = {doc.path for doc in ls.documents}
        for change in params.changes:
            path = convert.uri_path(change.uri)
            if path is None or path.suffix != ".py":
                continue
            structural = change.type != types.FileChangeType.Changed
            if not structural and str(path) in open_paths:
                continue  # an open file is read from its buffer, whatever the disk holds
            # A file created or deleted changes where imports lead, open or not.
            ls.analyzer.disk_changed(str(path), structural)
            ls._edits += 1
            ls.dependents_changed(str(path))

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def changed_configuration(ls: AdvisorServer, params: types.DidChangeConfigurationParams) -> None:
        raw = params.settings
        if not raw and ls._capability("workspace", "configuration"):
            # Clients that only signal a change expect the server to ask for the section.
            try:
                answer = await asyncio.wait_for(
                    ls.workspace_configuration_async(
                        types.ConfigurationParams(items=[types.ConfigurationItem(section="advisor")])
                    ),
                    10,
                )
                raw = answer[0] if answer else None
            except Exception as exc:  # noqa: BLE001 - keep the settings we have
                log.warning("workspace/configuration failed: %s", exc)
                return
        before = ls._settings_generation
        ls.apply_settings(raw)
        if ls._settings_generation != before:
            ls.invalidate()

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: AdvisorServer, params: Any) -> None:
        for task in ls._pushes.values():
            task.cancel()
        ls.analyzer.shutdown()

    return server


# -- code actions ----------------------------------------------------------------------------------
def _wanted(only: Optional[List[str]], kind: str) -> bool:
    return only is None or any(kind == k or kind.startswith(f"{k}.") for k in only)


def _workspace_edit(ls: AdvisorServer, doc: Document, edits: List[types.TextEdit]) -> types.WorkspaceEdit:
    if ls._capability("workspace", "workspace_edit", "document_changes"):
        # Versioned: the client refuses the edit if the document changed since.
        identifier = types.OptionalVersionedTextDocumentIdentifier(uri=doc.uri, version=doc.version)
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=identifier, edits=edits)])
    return types.WorkspaceEdit(changes={doc.uri: edits})


async def _code_actions(ls: AdvisorServer, doc: Document, params: types.CodeActionParams, whole_file: bool = True):
    """Quick fixes and noqa actions for the diagnostics in the request; fix-all for files
    (``whole_file``), not for a notebook's cells."""
    only = params.context.only
    lines, encoding = doc.lines, ls.encoding
    ours = [d for d in params.context.diagnostics if d.source == convert.SOURCE and isinstance(d.code, str)]
    fixes: List[types.CodeAction] = []
    ignores: List[types.CodeAction] = []
    if _wanted(only, types.CodeActionKind.QuickFix):
        silenced = set()
        for diag in ours:
            data = diag.data if isinstance(diag.data, dict) else {}
            fix = convert.fix_from_data(data["fix"]) if data.get("fix") else None
            # A fix belongs to the text it was computed on: offered only for that version.
            if fix is not None and data.get("version") == doc.version:
                edits = [convert.text_edit(lines, e, encoding) for e in fix.edits]
                fixes.append(types.CodeAction(
                    title=fix_title(diag.code, fix), kind=types.CodeActionKind.QuickFix, diagnostics=[diag],
                    edit=_workspace_edit(ls, doc, edits), is_preferred=fix.applicability is Applicability.SAFE,
                ))
            row = diag.range.start.line + 1
            if (row, diag.code) in silenced or row > len(lines):
                continue
            silenced.add((row, diag.code))
            edit = noqa_edit(lines[row - 1], row, diag.code)
            if edit is not None:
                ignores.append(types.CodeAction(
                    title=noqa_title(diag.code), kind=types.CodeActionKind.QuickFix, diagnostics=[diag],
                    edit=_workspace_edit(ls, doc, [convert.text_edit(lines, edit, encoding)]),
                ))
    fixes.sort(key=lambda action: not action.is_preferred)  # safe fixes first
    actions = fixes + ignores
    if whole_file and _wanted(only, KIND_FIX_ALL):
        # Asked for explicitly (on save, or the Source Action menu), or offered in the light
        # bulb when the current analysis knows of a safe fix.
        latest = ls.analyzer.latest(doc.uri)
        has_safe = latest is not None and latest.version == doc.version and any(
            f.fix is not None and f.fix.applicability is Applicability.SAFE for f in latest.findings
        )
        if only is not None or has_safe:
            action = await _fix_all(ls, doc)
            if action is not None:
                actions.append(action)
    return actions


async def _fix_all(ls: AdvisorServer, doc: Document) -> Optional[types.CodeAction]:
    version, text = doc.version, doc.text
    job = ls.job(doc, text, version)
    job = replace(job, wanted=lambda: ls.documents.get(doc.uri) is doc and doc.version == version)
    try:
        result = await ls.analyzer.fix_all(job)
    except Superseded:
        return None
    if result is None or doc.version != version:
        return None
    new_text, count = result
    edit = convert.minimal_edit(text, new_text)
    if edit is None:
        return None
    lines = convert.lines_of(text)
    return types.CodeAction(
        title=f"Apply {count} safe torch-advisor fix{'es' if count != 1 else ''}",
        kind=KIND_FIX_ALL,
        edit=_workspace_edit(ls, doc, [convert.text_edit(lines, edit, ls.encoding)]),
    )


# -- hover -----------------------------------------------------------------------------------------
def _hover(ls: AdvisorServer, doc: Document, position: types.Position, findings: List[Finding]) -> Optional[types.Hover]:
    lines, encoding = doc.lines, ls.encoding
    if position.line >= len(lines):
        return None
    point = convert.engine_position(lines, position, encoding)
    line = lines[point.row - 1]
    in_noqa = noqa_code_at(line, point.column - 1)
    if in_noqa is not None:
        code, start, end = in_noqa
        text = rule_markdown(code)
        if text is None:
            return None
        rng = convert.lsp_range(lines, Position(point.row, start + 1), Position(point.row, end + 1), encoding)
        return _markdown(text, rng)
    under = [f for f in findings if contains(f.start, f.end, point)]
    texts = [t for t in (rule_markdown(code) for code in unique(f.code for f in under)) if t]
    if not texts:
        return None
    first = under[0]
    return _markdown("\n\n---\n\n".join(texts), convert.lsp_range(lines, first.start, first.end, encoding))


def _markdown(text: str, rng: types.Range) -> types.Hover:
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text), range=rng)


# -- entry point -----------------------------------------------------------------------------------
def serve(tcp: Optional[str] = None) -> int:
    """Runs the server until `exit` or the end of input; the exit code is the protocol's: 0
    after `shutdown`, 1 without it."""
    import sys

    server = build_server()
    if tcp:
        host, _, port = tcp.rpartition(":")
        server.start_tcp(host or "127.0.0.1", int(port))
        return server.protocol.exit_code
    # stdout carries the protocol and nothing else: anything printed by mistake (a stray
    # print, a library warning) goes to stderr instead of corrupting a message.
    protocol_out = sys.stdout.buffer
    sys.stdout = sys.stderr
    server.start_io(sys.stdin.buffer, protocol_out)
    return server.protocol.exit_code
