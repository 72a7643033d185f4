"""End-to-end tests of `advisor lsp` through pytest-lsp, for two client profiles:

- push: VS Code 1.65's capabilities (no pull diagnostics, utf-16 positions);
- pull: Neovim 0.11's capabilities (textDocument/diagnostic, utf-8 positions).

One server per profile (module scope); each test works on its own files, and waits with a
timeout so that a broken server fails the test instead of hanging it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("pygls", reason="the `lsp` extra is not installed")
pytest_lsp = pytest.importorskip("pytest_lsp", reason="pytest-lsp is not installed")

from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

from advisor.config import Config  # noqa: E402
from advisor.engine import check_source  # noqa: E402
from advisor.fixes import fix_until_stable  # noqa: E402
from tests.lsp_helpers import (  # noqa: E402
    TIMEOUT, apply_edits, edits_for, find, make_client, points_to_units, server_command, server_env, until,
)

pytestmark = [pytest.mark.asyncio(loop_scope="module")]

PROFILES = {"push": "visual-studio-code@v1.65.2", "pull": "neovim@v0.11.0"}

SCRIPT = '''\
import torch
from torch.utils.data import DataLoader

model = torch.nn.Linear(4, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = DataLoader(samples, batch_size=8)

for batch in loader:
    loss = model(batch.cuda()).sum()
    loss.backward()
    optimizer.step()
    print("perte 😀 é", loss.item())
'''
ITEM_LINE = 11  # 0-based line of `loss.item()`, behind non-ASCII text


@pytest_lsp.fixture(
    scope="module",
    params=list(PROFILES),
    config=ClientServerConfig(server_command=server_command(), client_factory=make_client, server_env=server_env()),
)
async def client(request, lsp_client: LanguageClient):
    result = await asyncio.wait_for(
        lsp_client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities(PROFILES[request.param]),
                initialization_options={"debounceMs": 20},
            )
        ),
        TIMEOUT,
    )
    encoding = result.capabilities.position_encoding
    lsp_client.mode = request.param
    lsp_client.encoding = getattr(encoding, "value", encoding) or "utf-16"
    lsp_client.versions = {}
    lsp_client.texts = {}
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), TIMEOUT)


# -- helpers ---------------------------------------------------------------------------------------
def open_file(client, path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    uri = path.as_uri()
    client.versions[uri] = 1
    client.texts[uri] = text
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        )
    )
    return uri


def change(client, uri: str, edits=None, text: str = None) -> int:
    """Sends the client's edits (incremental, as editors do) or a whole new text."""
    client.versions[uri] += 1
    if edits is not None:
        changes = [types.TextDocumentContentChangePartial(range=e.range, text=e.new_text) for e in
                   sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True)]
        client.texts[uri] = apply_edits(client.texts[uri], edits, client.encoding)
    else:
        changes = [types.TextDocumentContentChangeWholeDocument(text=text)]
        client.texts[uri] = text
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=client.versions[uri]),
            content_changes=changes,
        )
    )
    return client.versions[uri]


async def diagnostics(client, uri: str, after: int = -1):
    """Fresh diagnostics for the document's current version: pulled, or the first publish for
    that version (after publish number ``after`` when the same version is re-published)."""
    if client.mode == "pull":
        report = await asyncio.wait_for(
            client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
            ),
            TIMEOUT,
        )
        return report.items
    version = client.versions[uri]

    def published():
        for index, params in enumerate(client.published):
            if index > after and params.uri == uri and params.version == version:
                return params
        return None

    return (await until(published, what=f"diagnostics for version {version}")).diagnostics


def codes(diags) -> list:
    return sorted(d.code for d in diags)


async def actions(client, uri: str, diags, only=None):
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=diags[0].range if diags else types.Range(start=types.Position(0, 0), end=types.Position(0, 0)),
        context=types.CodeActionContext(diagnostics=list(diags), only=only),
    )
    return await asyncio.wait_for(client.text_document_code_action_async(params), TIMEOUT)


# -- tests -----------------------------------------------------------------------------------------
async def test_profile_negotiates_mode_and_encoding(client):
    caps = client.capabilities
    assert (client.mode == "pull") == (caps.text_document.diagnostic is not None)
    # Neovim offers utf-8 first; VS Code 1.65 offers nothing, so utf-16.
    assert client.encoding == ("utf-8" if client.mode == "pull" else "utf-16")


async def test_diagnostics_have_code_severity_link_and_fix(client, tmp_path):
    uri = open_file(client, tmp_path / "train.py", SCRIPT)
    diags = await diagnostics(client, uri)
    assert {"GPU101", "GPU201"} <= set(codes(diags))  # other rules may join as they are written
    by_code = {d.code: d for d in diags}
    for diag in diags:
        assert diag.source == "advisor"
        assert diag.severity == types.DiagnosticSeverity.Warning
        assert diag.code_description.href.endswith(f"#{diag.code.lower()}")
        assert diag.code_description.href.startswith("file://")
    assert by_code["GPU201"].data["fix"]["applicability"] == "safe"
    assert "fix" not in by_code["GPU101"].data


async def test_after_comment_edits_the_diagnostics_are_those_of_a_full_check(client, tmp_path):
    """A comment or blank line moves the previous findings instead of analysing again
    (advisor/lsp/comment_edits); what the client gets is what a full check says."""
    from advisor.lsp import convert

    uri = open_file(client, tmp_path / "train.py", SCRIPT)
    await diagnostics(client, uri)
    for line, inserted in ((7, "# each batch\n"), (0, "\n"), (9, "    # the step\n")):
        where = types.Range(start=types.Position(line, 0), end=types.Position(line, 0))
        before = len(client.published)
        change(client, uri, edits=[types.TextEdit(range=where, new_text=inserted)])
        diags = await diagnostics(client, uri, after=before - 1)
        text = client.texts[uri]
        lines = convert.lines_of(text)
        full = check_source(text, "train.py", Config()).findings
        assert [(d.code, d.range, d.message, d.data.get("fix")) for d in diags] == [
            (f.code, convert.lsp_range(lines, f.start, f.end, client.encoding), f.message,
             convert.fix_to_data(f.fix) if f.fix else None) for f in full]


async def test_columns_on_non_ascii_line(client, tmp_path):
    uri = open_file(client, tmp_path / "train.py", SCRIPT)
    diags = await diagnostics(client, uri)
    item = next(d for d in diags if d.code == "GPU101")
    line = SCRIPT.splitlines()[ITEM_LINE]
    start = line.index("loss.item()")
    assert item.range.start == types.Position(ITEM_LINE, points_to_units(line, start, client.encoding))
    assert item.range.end.character == points_to_units(line, start + len("loss.item()"), client.encoding)
    # The same column in code points would be wrong for both encodings on this line.
    assert item.range.start.character != start


async def test_quick_fix_applied_and_rechecked(client, tmp_path):
    uri = open_file(client, tmp_path / "train.py", SCRIPT)
    diags = await diagnostics(client, uri)
    target = [d for d in diags if d.code == "GPU201"]
    fix = find(await actions(client, uri, target, only=[types.CodeActionKind.QuickFix]), "pin_memory")
    assert fix.kind == types.CodeActionKind.QuickFix and fix.is_preferred
    if client.capabilities.workspace.workspace_edit.document_changes:  # versioned where the client can
        assert fix.edit.document_changes[0].text_document.version == client.versions[uri]
    else:
        assert fix.edit.changes
    before = len(client.published)
    change(client, uri, edits=edits_for(fix.edit, uri))
    assert "DataLoader(samples, batch_size=8, pin_memory=True)" in client.texts[uri]
    diags = await diagnostics(client, uri, after=before - 1)
    assert "GPU201" not in codes(diags) and "GPU101" in codes(diags)


async def test_fix_is_refused_for_another_version(client, tmp_path):
    uri = open_file(client, tmp_path / "train.py", SCRIPT)
    stale = [d for d in await diagnostics(client, uri) if d.code == "GPU201"]
    change(client, uri, text="# a comment\n" + SCRIPT)
    await diagnostics(client, uri)
    titles = [a.title for a in await actions(client, uri, stale, only=[types.CodeActionKind.QuickFix])]
    assert not any("pin_memory" in t for t in titles)


async def test_noqa_action_adds_and_merges(client, tmp_path):
    text = SCRIPT.replace('loss.item())', 'loss.item())  # noqa: GPU999')
    uri = open_file(client, tmp_path / "train.py", text)
    target = [d for d in await diagnostics(client, uri) if d.code == "GPU101"]
    action = find(await actions(client, uri, target), "Ignore GPU101 on this line")
    change(client, uri, edits=edits_for(action.edit, uri))
    assert client.texts[uri].splitlines()[ITEM_LINE].endswith("# noqa: GPU999, GPU101")
    assert "GPU101" not in codes(await diagnostics(client, uri))

    target = [d for d in await diagnostics(client, uri) if d.code == "GPU201"]
    action = find(await actions(client, uri, target), "Ignore GPU201 on this line")
    change(client, uri, edits=edits_for(action.edit, uri))
    assert client.texts[uri].splitlines()[5].endswith(")  # noqa: GPU201")
    assert not {"GPU101", "GPU201"} & set(codes(await diagnostics(client, uri)))


async def test_fix_all_matches_the_command_line(client, tmp_path):
    text = SCRIPT + "\nloader2 = DataLoader(samples)\nfor b in loader2:\n    model(b.cuda()).sum().backward()\n"
    uri = open_file(client, tmp_path / "train.py", text)
    await diagnostics(client, uri)
    result = await actions(client, uri, [], only=[types.CodeActionKind.SourceFixAll])
    action = find(result, "safe torch-advisor fix")
    assert action.kind == "source.fixAll.advisor"
    change(client, uri, edits=edits_for(action.edit, uri))
    expected, applied, _ = fix_until_stable(text, lambda t: check_source(t, "train.py", Config()))
    assert applied >= 2
    assert client.texts[uri] == expected
    assert "GPU201" not in codes(await diagnostics(client, uri))
    # Quick fixes only: no fix-all.
    quick = await actions(client, uri, [], only=[types.CodeActionKind.QuickFix])
    assert not any(a.kind == "source.fixAll.advisor" for a in quick or [])


async def test_hover_on_diagnostic_and_on_noqa_code(client, tmp_path):
    text = SCRIPT.replace("import torch\n", "import torch  # noqa: GPU301\n", 1)
    uri = open_file(client, tmp_path / "train.py", text)
    item = next(d for d in await diagnostics(client, uri) if d.code == "GPU101")
    hover = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=item.range.start)), TIMEOUT)
    assert hover.contents.kind == types.MarkupKind.Markdown
    assert "## GPU101" in hover.contents.value and "<a id=" not in hover.contents.value
    column = text.splitlines()[0].index("GPU301") + 2
    hover = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(0, column))), TIMEOUT)
    assert "## GPU301" in hover.contents.value
    assert hover.range.start.character == column - 2
    nothing = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(2, 0))), TIMEOUT)
    assert nothing is None


async def test_pyproject_reload_without_restart(client, tmp_path):
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    uri = open_file(client, project / "pkg" / "train.py", SCRIPT)
    assert "GPU101" in codes(await diagnostics(client, uri))
    pyproject = project / "pyproject.toml"
    pyproject.write_text('[tool.advisor]\nignore = ["GPU101"]\n', encoding="utf-8")
    before = len(client.published)
    refreshes = client.diagnostic_refresh_count
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        changes=[types.FileEvent(uri=pyproject.as_uri(), type=types.FileChangeType.Created)]))
    if client.mode == "push":
        assert "GPU101" not in codes(await diagnostics(client, uri, after=before - 1))
    else:
        await asyncio.sleep(0.2)  # the notification is handled before the next pull
        assert "GPU101" not in codes(await diagnostics(client, uri))
        assert client.diagnostic_refresh_count == refreshes  # Neovim 0.11's profile has no refresh support


async def test_editor_settings_select(client, tmp_path):
    uri = open_file(client, tmp_path / "train.py", SCRIPT)
    await diagnostics(client, uri)
    try:
        before = len(client.published)
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"advisor": {"select": ["GPU2"]}}))
        if client.mode == "pull":
            await asyncio.sleep(0.2)
        selected = codes(await diagnostics(client, uri, after=before - 1))
        assert "GPU201" in selected and all(code.startswith("GPU2") for code in selected)
    finally:
        before = len(client.published)
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"advisor": {"select": None}}))
        if client.mode == "pull":
            await asyncio.sleep(0.2)
        assert "GPU101" in codes(await diagnostics(client, uri, after=before - 1))


async def test_parse_error_mid_edit_keeps_last_good_and_recovers(client, tmp_path):
    uri = open_file(client, tmp_path / "train.py", SCRIPT)
    good = await diagnostics(client, uri)
    change(client, uri, text=SCRIPT + "def broken(:\n")
    diags = await diagnostics(client, uri)
    problems = [d for d in diags if d.code is None]
    assert len(problems) == 1 and problems[0].severity == types.DiagnosticSeverity.Error
    assert problems[0].range.start.line == len(SCRIPT.splitlines())
    assert codes([d for d in diags if d.code]) == codes(good)
    assert all("fix" not in d.data for d in diags)  # kept, but their edits belong to the old text
    change(client, uri, text=SCRIPT)
    assert codes(await diagnostics(client, uri)) == codes(good)


async def test_close_clears_diagnostics(client, tmp_path):
    uri = open_file(client, tmp_path / "train.py", SCRIPT)
    assert await diagnostics(client, uri)
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    await until(lambda: any(p.uri == uri and not p.diagnostics for p in client.published), what="an empty publish")
    if client.mode == "pull":
        assert not await diagnostics(client, uri)


async def test_rapid_changes_publish_only_the_latest_version(client, tmp_path):
    uri = open_file(client, tmp_path / "train.py", SCRIPT)
    await diagnostics(client, uri)
    before = len(client.published)
    for index in range(5):
        change(client, uri, text=f"# edit {index}\n" + SCRIPT)
    diags = await diagnostics(client, uri, after=before - 1)
    item = next(d for d in diags if d.code == "GPU101")
    assert item.range.start.line == ITEM_LINE + 1
    if client.mode == "push":
        versions = [p.version for p in client.published[before:] if p.uri == uri]
        assert versions == [client.versions[uri]]  # the debounce dropped the intermediate ones


DDP_SCRIPT = '''\
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

dist.init_process_group("nccl")
sampler = DistributedSampler(dataset)
loader = DataLoader(dataset, batch_size=32, sampler=sampler, pin_memory=True, num_workers=4)
for epoch in range(10):
    for x, y in loader:
        loss = model(x.cuda(non_blocking=True)).sum()
        loss.backward()
        optimizer.step()
    print("époque 😀", epoch)
'''
EPOCH_LINE = 7  # 0-based line of the epoch loop


async def test_related_places_become_related_information(client, tmp_path):
    uri = open_file(client, tmp_path / "ddp.py", DDP_SCRIPT)
    diag = next(d for d in await diagnostics(client, uri) if d.code == "GPU501")
    assert f"at line {EPOCH_LINE + 1} " in diag.message
    [related] = diag.related_information
    assert related.message == "epoch loop" and related.location.uri == uri
    assert related.location.range.start == types.Position(EPOCH_LINE, 0)
    last = DDP_SCRIPT.splitlines()[-1]  # the loop ends on a line with non-ASCII text: columns in the client's units
    assert related.location.range.end == types.Position(len(DDP_SCRIPT.splitlines()) - 1,
                                                        points_to_units(last, len(last), client.encoding))
    assert diag.data["fields"] == {"sampler": "sampler", "epoch": "epoch"}
