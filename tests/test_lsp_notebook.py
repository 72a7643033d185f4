"""Notebook documents in the language server: cells checked together, diagnostics per cell."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("pygls", reason="the `lsp` extra is not installed")
pytest_lsp = pytest.importorskip("pytest_lsp", reason="pytest-lsp is not installed")

from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

from tests.lsp_helpers import TIMEOUT, make_client, server_command, server_env, until  # noqa: E402

pytestmark = [pytest.mark.asyncio(loop_scope="module")]

PROFILES = {"push": "visual-studio-code@v1.65.2", "pull": "neovim@v0.11.0"}
SETUP = "%matplotlib inline\nimport torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=4)\n"
LOOP = "for x, y in loader:\n    !echo step\n    loss = model(x.cuda()).mean()\n    loss.backward()\n    optimizer.step()\n    total += loss.item()\n"


@pytest_lsp.fixture(
    scope="module",
    params=list(PROFILES),
    config=ClientServerConfig(server_command=server_command(), client_factory=make_client, server_env=server_env()),
)
async def client(request, lsp_client: LanguageClient):
    capabilities = client_capabilities(PROFILES[request.param])
    capabilities.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities()
    )
    result = await asyncio.wait_for(
        lsp_client.initialize_session(
            types.InitializeParams(capabilities=capabilities, initialization_options={"debounceMs": 20})
        ),
        TIMEOUT,
    )
    lsp_client.mode = request.param
    lsp_client.sync = result.capabilities.notebook_document_sync
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), TIMEOUT)


def open_notebook(client, uri: str, texts):
    cells, items = [], []
    for i, (kind, text) in enumerate(texts):
        cell_uri = f"vscode-notebook-cell:{uri[len('file:'):]}#C{i}"
        cells.append(types.NotebookCell(kind=kind, document=cell_uri))
        items.append(types.TextDocumentItem(uri=cell_uri, language_id="python" if kind == types.NotebookCellKind.Code
                                            else "markdown", version=1, text=text))
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(uri=uri, notebook_type="jupyter-notebook", version=1, cells=cells),
        cell_text_documents=items,
    ))
    return [c.document for c in cells]


async def cell_diagnostics(client, cell_uri: str, want=lambda d: True):
    if client.mode == "pull":
        async def pulled():
            report = await asyncio.wait_for(client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=cell_uri))), TIMEOUT)
            return report.items
        for _ in range(100):
            items = await pulled()
            if want(items):
                return items
            await asyncio.sleep(0.05)
        raise AssertionError("no matching diagnostics")
    found = await until(lambda: next((p for p in reversed(client.published) if p.uri == cell_uri
                                      and want(p.diagnostics)), None), what=f"diagnostics for {cell_uri}")
    return found.diagnostics


async def test_capability_and_per_cell_diagnostics(client, tmp_path):
    assert client.sync is not None
    uri = (tmp_path / "train.ipynb").as_uri()
    md, setup, loop = open_notebook(client, uri, [
        (types.NotebookCellKind.Markup, "# Title\n"),
        (types.NotebookCellKind.Code, SETUP),
        (types.NotebookCellKind.Code, LOOP),
    ])
    loop_diags = await cell_diagnostics(client, loop, lambda d: bool(d))
    item = next(d for d in loop_diags if d.code == "GPU101")
    assert item.range.start.line == 5 and item.range.start.character == 13  # row in the cell
    setup_diags = await cell_diagnostics(client, setup, lambda d: bool(d))
    assert {d.code for d in setup_diags} == {"GPU201", "GPU202"} and setup_diags[0].range.start.line == 3

    # An edit in the loop cell that removes the `.item()` clears it, and only it.
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        notebook_document=types.VersionedNotebookDocumentIdentifier(uri=uri, version=2),
        change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(text_content=[
            types.NotebookDocumentCellContentChanges(
                document=types.VersionedTextDocumentIdentifier(uri=loop, version=2),
                changes=[types.TextDocumentContentChangeWholeDocument(text=LOOP.replace("loss.item()", "loss.detach()"))],
            )
        ])),
    ))
    await cell_diagnostics(client, loop, lambda d: not any(x.code == "GPU101" for x in d))

    client.notebook_document_did_close(types.DidCloseNotebookDocumentParams(
        notebook_document=types.NotebookDocumentIdentifier(uri=uri),
        cell_text_documents=[types.TextDocumentIdentifier(uri=u) for u in (md, setup, loop)],
    ))
    if client.mode == "push":
        await until(lambda: any(p.uri == setup and not p.diagnostics for p in client.published), what="cleared")


async def test_quick_fix_noqa_and_hover_in_a_cell(client, tmp_path):
    from tests.lsp_helpers import apply_edits

    uri = (tmp_path / "fixes.ipynb").as_uri()
    setup, loop = open_notebook(client, uri, [(types.NotebookCellKind.Code, SETUP), (types.NotebookCellKind.Code, LOOP)])
    diags = await cell_diagnostics(client, setup, lambda d: any(x.code == "GPU201" for x in d))
    pin = next(d for d in diags if d.code == "GPU201")
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=setup), range=pin.range,
        context=types.CodeActionContext(diagnostics=[pin]),
    )
    found = await asyncio.wait_for(client.text_document_code_action_async(params), TIMEOUT)
    titles = [a.title for a in found]
    assert any("pin_memory=True" in t for t in titles) and any(t.startswith("Ignore GPU201") for t in titles)
    assert not any(a.kind == "source.fixAll.advisor" for a in found)  # fix-all stays with files
    fix = next(a for a in found if "pin_memory=True" in a.title)
    changes = fix.edit.document_changes or []
    edits = changes[0].edits if changes else fix.edit.changes[setup]
    assert (changes[0].text_document.uri if changes else setup) == setup
    fixed = apply_edits(SETUP, edits, "utf-16")
    assert fixed.splitlines()[3] == "loader = DataLoader(ds, batch_size=4, pin_memory=True)"
    assert fixed.splitlines()[0] == "%matplotlib inline"  # the magic is untouched

    hover = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=setup), position=pin.range.start)), TIMEOUT)
    assert hover is not None and "## GPU201" in hover.contents.value
    client.notebook_document_did_close(types.DidCloseNotebookDocumentParams(
        notebook_document=types.NotebookDocumentIdentifier(uri=uri),
        cell_text_documents=[types.TextDocumentIdentifier(uri=u) for u in (setup, loop)],
    ))


async def test_related_place_in_another_cell_points_at_that_cell(client, tmp_path):
    uri = (tmp_path / "ddp.ipynb").as_uri()
    sampler_cell, loop_cell = open_notebook(client, uri, [
        (types.NotebookCellKind.Code, "import torch.distributed as dist\nfrom torch.utils.data import DistributedSampler\n"
                                      "sampler = DistributedSampler(ds)\n"),
        (types.NotebookCellKind.Code, "# train\nfor epoch in range(3):\n    for x in loader:\n"
                                      "        model(x.cuda()).sum().backward()\n        opt.step()\n"),
    ])
    diags = await cell_diagnostics(client, sampler_cell, lambda d: any(x.code == "GPU501" for x in d))
    [related] = next(d for d in diags if d.code == "GPU501").related_information
    assert related.message == "epoch loop" and related.location.uri == loop_cell
    assert related.location.range.start == types.Position(1, 0)  # row 2 of the loop's own cell
