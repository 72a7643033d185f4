"""The language server and the limits: a file nested deeper than the parser survives, a file
whose analysis runs past its budget, and a document changed while it is analysed."""

from __future__ import annotations

import asyncio
import threading

import pytest

pytest.importorskip("pygls", reason="the `lsp` extra is not installed")
pytest_lsp = pytest.importorskip("pytest_lsp", reason="pytest-lsp is not installed")

from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

import advisor.engine as engine  # noqa: E402
from advisor.config import Config  # noqa: E402
from advisor.limits import LimitProblem  # noqa: E402
from advisor.lsp import convert  # noqa: E402
from advisor.lsp.analysis import Analyzer, Job, Superseded  # noqa: E402
from tests.lsp_helpers import TIMEOUT, make_client, server_command, server_env, until  # noqa: E402
from tests.snippets import HOT  # noqa: E402

SLOW_MARK = "# analysed slowly\n"
HELD_MARK = "# held\n"


class _Model:
    """A stand-in for FileModel whose build runs forever on texts marked slow (pure Python, so
    only the budget or a cancellation can stop it), waits for a release on texts marked held,
    and builds the real model otherwise."""

    real = engine.FileModel
    release = threading.Event()

    @classmethod
    def build(cls, module, filename="<stdin>", torch_version=None, reexports=None):
        code = module.code
        if SLOW_MARK in code:
            while True:
                pass
        if HELD_MARK in code:
            assert cls.release.wait(TIMEOUT)
        return cls.real.build(module, filename, torch_version, reexports)


@pytest.fixture
def model_stub(monkeypatch):
    _Model.release.clear()
    monkeypatch.setattr(engine, "FileModel", _Model)
    yield _Model
    _Model.release.set()


def _job(uri: str, text: str, version: int = 1, budget: float = 60.0, wanted=lambda: True) -> Job:
    return Job(uri=uri, text=text, version=version, key=(version,), filename="train.py", path=None,
               config=Config(analysis_budget=budget), excluded=False, encoding=convert.UTF16,
               href=lambda code: None, wanted=wanted)


def test_an_analysis_past_its_budget_is_one_diagnostic(model_stub):
    analyzer = Analyzer()
    try:
        analysis = analyzer._run(_job("file:///slow.py", HOT + SLOW_MARK, budget=0.2), None)
        assert isinstance(analysis.problem, LimitProblem)
        assert [d.message for d in analysis.diagnostics] == [analysis.problem.reason]
        assert "budget of 0.2 s" in analysis.problem.reason
        assert "file:///slow.py" not in analyzer._chunks  # stopped midway: nothing half-parsed is kept
    finally:
        analyzer.shutdown()


def test_a_document_changed_meanwhile_stops_its_analysis(model_stub):
    analyzer = Analyzer()
    asked = []

    def wanted() -> bool:  # the client replaces the version once the analysis has begun
        asked.append(1)
        return len(asked) < 3

    try:
        with pytest.raises(Superseded):
            analyzer._run(_job("file:///typing.py", HOT + SLOW_MARK, wanted=wanted), None)
        assert "file:///typing.py" not in analyzer._chunks
    finally:
        analyzer.shutdown()


@pytest.mark.asyncio
async def test_other_files_do_not_wait_behind_a_file_over_budget(model_stub):
    analyzer = Analyzer()
    try:
        first = await analyzer.analyse(_job("file:///big.py", HOT + SLOW_MARK, budget=0.2))
        assert isinstance(first.problem, LimitProblem)
        # The next version of that file is held mid-analysis; another file is checked meanwhile.
        held = asyncio.ensure_future(analyzer.analyse(_job("file:///big.py", HOT + HELD_MARK, version=2)))
        other = await asyncio.wait_for(analyzer.analyse(_job("file:///small.py", HOT)), TIMEOUT)
        assert [d.code for d in other.diagnostics] == ["GPU101"]
        assert not held.done()
        model_stub.release.set()
        second = await asyncio.wait_for(held, TIMEOUT)
        assert second.problem is None and [d.code for d in second.diagnostics] == ["GPU101"]
        assert "file:///big.py" not in analyzer._slow  # back within budget: back in the common line
    finally:
        model_stub.release.set()
        analyzer.shutdown()


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=server_command(), client_factory=make_client, server_env=server_env()),
)
async def client(lsp_client: LanguageClient):
    await asyncio.wait_for(lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code@v1.65.2"),
        initialization_options={"debounceMs": 0})), TIMEOUT)
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), TIMEOUT)


def _open(client, path, text: str) -> str:
    path.write_text(text)
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    return uri


async def _published(client, uri: str):
    return (await until(lambda: next((p for p in client.published if p.uri == uri), None),
                        what=f"diagnostics for {uri}")).diagnostics


@pytest.mark.asyncio
async def test_the_server_survives_a_file_that_crashes_the_parser(client, tmp_path):
    # 10,000 chained lambdas: libcst's native parser dies with SIGSEGV on it, and the server
    # parses in its own process.
    deep = _open(client, tmp_path / "deep.py", HOT + "z = \\\n" + "lambda: \\\n" * 10_000 + "a\n")
    [diagnostic] = await _published(client, deep)
    assert "too deeply nested" in diagnostic.message
    good = _open(client, tmp_path / "good.py", HOT)
    assert [d.code for d in await _published(client, good)] == ["GPU101"]
