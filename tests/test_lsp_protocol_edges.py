"""The language server where clients stray from the happy path: edits past the end of a line,
parameters that do not fit the protocol, requests after `shutdown`, `exit` with and without it.

The edit tests compare the server's copy with the editor's buffer, computed by the
specification's rule in tests/lsp_helpers.py (`offset`), written apart from the server's code.
"""

from __future__ import annotations

import pytest

pytest.importorskip("pygls", reason="the `lsp` extra is not installed")
pytest.importorskip("pytest_lsp", reason="pytest-lsp is not installed")

from lsprotocol import types  # noqa: E402

from advisor.engine import check_source  # noqa: E402
from tests.lsp_helpers import RawSession, apply_edits, edits_for, find, points_to_units  # noqa: E402
from tests.test_lsp_server import (  # noqa: E402,F401
    ITEM_LINE, SCRIPT, actions, change, client, codes, diagnostics, open_file,
)

INVALID_REQUEST, INVALID_PARAMS = -32600, -32602

# The last line has no line break: pygls moved a position past its end one character left.
TAIL = 'steps = 1'
LAST = SCRIPT.count("\n")


def _problems(diags):
    return [d for d in diags if isinstance(d.data, dict) and d.data.get("problem")]


@pytest.mark.asyncio(loop_scope="module")
async def test_edit_past_the_end_of_the_last_line_lands_at_its_end(client, tmp_path):  # noqa: F811
    uri = open_file(client, tmp_path / "train.py", SCRIPT + TAIL)
    assert "GPU101" in codes(await diagnostics(client, uri))
    edit = types.TextEdit(range=types.Range(start=types.Position(LAST, 500), end=types.Position(LAST, 500)),
                          new_text="0")
    change(client, uri, edits=[edit])
    assert client.texts[uri].endswith("steps = 10")  # the editor's buffer, by the protocol's rule
    diags = await diagnostics(client, uri, after=len(client.published) - 1)
    assert not _problems(diags), [d.message for d in _problems(diags)]  # `steps = 01` would not parse
    expected = check_source(client.texts[uri], "train.py").findings
    assert codes(diags) == sorted(f.code for f in expected)


@pytest.mark.asyncio(loop_scope="module")
async def test_edits_past_line_ends_in_each_encoding_match_the_editor(client, tmp_path):  # noqa: F811
    """Past the end of a non-ASCII last line (no line break after it), of the first line, and
    of the document; then the server's "Ignore GPU101" edit, computed on its own copy of the
    line, must land exactly at the end of the editor's line."""
    text = SCRIPT.rstrip("\n")  # the last line is the one with `loss.item()` and non-ASCII text
    uri = open_file(client, tmp_path / "train.py", text)
    await diagnostics(client, uri)
    last_line = text.split("\n")[-1]
    end_units = points_to_units(last_line, len(last_line), client.encoding)
    edits = [
        (types.Position(ITEM_LINE, end_units + 1), types.Position(ITEM_LINE, end_units + 7), "  # é"),
        (types.Position(0, 40), types.Position(0, 40), "  # first"),
        (types.Position(ITEM_LINE + 5, 0), types.Position(ITEM_LINE + 9, 3), "\nsteps = 2\n"),
    ]
    for start, end, new_text in edits:
        change(client, uri, edits=[types.TextEdit(range=types.Range(start=start, end=end), new_text=new_text)])
    assert client.texts[uri].startswith("import torch  # first\n")
    assert client.texts[uri].endswith(last_line + "  # é\nsteps = 2\n")
    diags = await diagnostics(client, uri, after=len(client.published) - 1)
    assert not _problems(diags), [d.message for d in _problems(diags)]  # `loss.item()  # é)` would not parse
    item = [d for d in diags if d.code == "GPU101"]
    assert item
    ignore = find(await actions(client, uri, item, only=[types.CodeActionKind.QuickFix]), "Ignore GPU101")
    after = apply_edits(client.texts[uri], edits_for(ignore.edit, uri), client.encoding)
    assert after.split("\n")[ITEM_LINE] == last_line + "  # é  # noqa: GPU101"


@pytest.fixture
def raw():
    session = RawSession()
    yield session
    session.close()


def test_hover_at_a_negative_position_gets_an_error(raw, tmp_path):
    raw.initialize()
    uri = (tmp_path / "t.py").as_uri()
    raw.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                         "text": SCRIPT}})
    answer = raw.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": -1, "character": 0}})
    assert answer["error"]["code"] == INVALID_PARAMS
    answer = raw.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": -5}})
    assert answer["error"]["code"] == INVALID_PARAMS
    # Still serving.
    answer = raw.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}})
    assert "error" not in answer


def test_requests_after_shutdown_get_errors_and_exit_gives_0(raw, tmp_path):
    raw.initialize()
    assert raw.request("shutdown", None).get("result") is None
    uri = (tmp_path / "t.py").as_uri()
    answer = raw.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}})
    assert answer["error"]["code"] == INVALID_REQUEST
    assert raw.request("shutdown", None)["error"]["code"] == INVALID_REQUEST
    raw.notify("exit")
    assert raw.wait_exit() == 0


def test_exit_without_shutdown_gives_1(raw):
    raw.initialize()
    raw.notify("exit")
    assert raw.wait_exit() == 1
