"""Fuzzing the language server: mutated scripts sent as whole-document and incremental changes,
with hovers and code actions at random places in between. The server must answer every request
and still give correct diagnostics at the end (a crash or a hang fails on the timeouts)."""

from __future__ import annotations

import asyncio
import os
import random

import pytest

pytest.importorskip("pytest_lsp")

from lsprotocol import types  # noqa: E402

from tests.lsp_helpers import TIMEOUT  # noqa: E402
from tests.test_fuzz import SOURCES, _mutate  # noqa: E402
from tests.test_lsp_server import SCRIPT, change, client, codes, diagnostics, open_file  # noqa: E402,F401,F811

pytestmark = [pytest.mark.fuzz, pytest.mark.asyncio(loop_scope="module")]
CASES = max(30, int(os.environ.get("ADVISOR_FUZZ_CASES", "300")) // 5)


def _random_range(rng: random.Random, text: str) -> types.Range:
    lines = text.split("\n")
    line = rng.randrange(len(lines) + 2)  # sometimes past the end: a robust server copes
    start = rng.randrange(80)
    return types.Range(
        start=types.Position(line=line, character=start),
        end=types.Position(line=line + rng.randrange(2), character=start + rng.randrange(10)),
    )


async def test_server_survives_mutated_documents(client, tmp_path):  # noqa: F811 - the fixture
    rng = random.Random(20261130)
    texts = [p.read_text() for p in SOURCES]
    uri = open_file(client, tmp_path / "fuzz.py", SCRIPT)
    await diagnostics(client, uri)
    for index in range(CASES):
        current = client.texts[uri]
        if index % 3 == 0:
            change(client, uri, text=_mutate(rng.choice(texts), rng))
        else:
            edit = types.TextEdit(range=_random_range(rng, current), new_text=rng.choice(["", "(", ":\n", "é😀", "x.item()"]))
            try:
                change(client, uri, edits=[edit])
            except (IndexError, ValueError):
                change(client, uri, text=_mutate(current, rng))
        if index % 4 == 0:
            position = _random_range(rng, client.texts[uri]).start
            await asyncio.wait_for(
                client.text_document_hover_async(
                    types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position)
                ),
                TIMEOUT,
            )
            await asyncio.wait_for(
                client.text_document_code_action_async(
                    types.CodeActionParams(
                        text_document=types.TextDocumentIdentifier(uri=uri),
                        range=_random_range(rng, client.texts[uri]),
                        context=types.CodeActionContext(diagnostics=[]),
                    )
                ),
                TIMEOUT,
            )
        if index % 10 == 9:
            await diagnostics(client, uri, after=len(client.published) - 1)
    # Still alive and still right.
    change(client, uri, text=SCRIPT)
    assert "GPU101" in codes(await diagnostics(client, uri, after=len(client.published) - 1))
