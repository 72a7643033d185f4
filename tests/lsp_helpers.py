"""Shared pieces of the language-server tests: the client factory, waiting with timeouts, and
applying the server's edits the way an editor does (written independently of the server's own
position code, so that the tests check it instead of repeating it)."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from typing import Callable, Dict, List, Optional

from lsprotocol import types

TIMEOUT = 120.0  # seconds: catches a hang; never reached by a slow but working server on a loaded machine


def server_command() -> List[str]:
    return [sys.executable, "-m", "advisor", "lsp", "--log-level", "warning"]


def server_env() -> Dict[str, str]:
    # The rule docs page for diagnostic links is written to the cache: keep it out of $HOME.
    return {**os.environ, "XDG_CACHE_HOME": tempfile.mkdtemp(prefix="advisor-lsp-cache-")}


def make_client():
    """pytest-lsp's client, also recording every publish with its version (the default handler
    keeps only the latest diagnostics) and answering registrations."""
    from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, LanguageClient, register_lsp_features
    from pygls.protocol import default_converter

    client = LanguageClient(converter_factory=default_converter)
    client.published = []  # type: ignore[attr-defined]
    client.registrations = []  # type: ignore[attr-defined]

    def publish(params: types.PublishDiagnosticsParams):
        client.diagnostics[params.uri] = params.diagnostics
        client.published.append(params)

    def register(params: types.RegistrationParams):
        client.registrations.extend(params.registrations)

    features = dict(DEFAULT_CLIENT_FEATURES)
    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish
    features[types.CLIENT_REGISTER_CAPABILITY] = register
    register_lsp_features(client, features)
    return client


async def until(condition: Callable[[], object], timeout: float = TIMEOUT, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(0.01)


# -- positions, as an editor computes them -------------------------------------------------------
def _lines(text: str) -> List[str]:
    import re

    return re.split(r"\r\n|\r|\n", text)


def _units_to_points(line: str, units: int, encoding: str) -> int:
    if encoding == "utf-32":
        return units
    codec = "utf-8" if encoding == "utf-8" else "utf-16-le"
    width = 1 if encoding == "utf-8" else 2
    return len(line.encode(codec)[: units * width].decode(codec, errors="ignore"))


def offset(text: str, position: types.Position, encoding: str) -> int:
    """The protocol's rule: a character past the end of its line means the line's end, a line
    past the end of the document means the document's end."""
    lines = _lines(text)
    if position.line >= len(lines):
        return len(text)
    start = 0
    for index in range(position.line):
        start += len(lines[index])
        start += 2 if text[start : start + 2] == "\r\n" else 1
    return start + _units_to_points(lines[position.line], position.character, encoding)


def points_to_units(line: str, points: int, encoding: str) -> int:
    prefix = line[:points]
    if encoding == "utf-32":
        return len(prefix)
    if encoding == "utf-8":
        return len(prefix.encode("utf-8"))
    return len(prefix.encode("utf-16-le")) // 2


def apply_edits(text: str, edits: List[types.TextEdit], encoding: str) -> str:
    spans = sorted(
        ((offset(text, e.range.start, encoding), offset(text, e.range.end, encoding), e.new_text) for e in edits),
        reverse=True,
    )
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def edits_for(edit: types.WorkspaceEdit, uri: str) -> List[types.TextEdit]:
    if edit.document_changes:
        return [e for change in edit.document_changes if change.text_document.uri == uri for e in change.edits]
    return list((edit.changes or {}).get(uri, []))


def find(actions: Optional[list], title_part: str):
    for action in actions or []:
        if title_part in action.title:
            return action
    raise AssertionError(f"no action with {title_part!r} among {[a.title for a in actions or []]}")


# -- a bare JSON-RPC client, for what pytest-lsp's typed client cannot send -------------------------
class RawSession:
    """`advisor lsp` on stdio, spoken to in raw JSON: malformed parameters, requests after
    `shutdown`, `exit` without `shutdown`. A reader thread collects the server's messages so
    that every wait has a timeout."""

    def __init__(self) -> None:
        import queue
        import subprocess
        import threading

        self.proc = subprocess.Popen(server_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=server_env())
        self.messages: "queue.Queue[dict]" = queue.Queue()
        self._next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        import json

        stream = self.proc.stdout
        while True:
            length = None
            while True:
                header = stream.readline()
                if not header:
                    return
                if header in (b"\r\n", b"\n"):
                    break
                name, _, value = header.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if length is None:
                return
            self.messages.put(json.loads(stream.read(length)))

    def send(self, message: dict) -> None:
        import json

        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def request(self, method: str, params) -> dict:
        """Sends a request and returns the response to it (skipping notifications)."""
        import queue

        self._next_id += 1
        msg_id = self._next_id
        self.send({"id": msg_id, "method": method, "params": params})
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                message = self.messages.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no answer to {method} within {TIMEOUT}s") from None
            if message.get("id") == msg_id and "method" not in message:
                return message

    def notify(self, method: str, params=None) -> None:
        self.send({"method": method, "params": params} if params is not None else {"method": method})

    def initialize(self) -> dict:
        answer = self.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        self.notify("initialized", {})
        return answer

    def wait_exit(self) -> int:
        return self.proc.wait(timeout=TIMEOUT)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
