"""pygls's protocol with the places where it departs from the LSP specification put right.

- Incremental changes: pygls updates its own copy of a document first, and while doing so it
  rewrites a position past the end of a line *in the message itself* (to one character before
  the end, on a last line without a line break). The server's own copy (documents.py) would
  then apply the moved position and drift from the editor's buffer. pygls gets a copy of the
  changes; the server's handler sees them as the client sent them.
- A request whose parameters do not fit the protocol's types (a negative position, a missing
  field) got no answer at all; it now gets an InvalidParams error.
- Requests after `shutdown` got no answer; the specification asks for InvalidRequest errors.
- `exit` ends the process with code 0 after `shutdown` and 1 without it. pygls raises
  SystemExit for that and then swallows it, so `serve` returns `exit_code` instead.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

log = logging.getLogger("advisor.lsp")


class _Unreadable:
    """A request whose parameters could not be read, kept so that it can be answered."""

    jsonrpc = "2.0"

    def __init__(self, msg_id: Any, method: str, reason: str) -> None:
        self.id = msg_id
        self.method = method
        self.reason = reason


class AdvisorProtocol(LanguageServerProtocol):
    exit_code = 1  # also when the client goes away without `shutdown` and `exit`

    def structure_message(self, data: Any) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if isinstance(data, dict) and "id" in data and isinstance(data.get("method"), str):
                cause = exc.__cause__ or exc
                return _Unreadable(data["id"], data["method"], str(cause).splitlines()[0] if str(cause) else "")
            raise

    def handle_message(self, message: Any) -> None:
        if isinstance(message, _Unreadable):
            log.warning("invalid parameters for %s: %s", message.method, message.reason)
            error = JsonRpcInvalidParams(message=f"invalid parameters for {message.method}: {message.reason}")
            self._send_response(message.id, None, error.to_response_error())
            return
        method = getattr(message, "method", None)
        if self._shutdown and method is not None and method != types.EXIT and hasattr(message, "id"):
            error = JsonRpcInvalidRequest(message=f"the server is shutting down: {method} refused")
            self._send_response(message.id, None, error.to_response_error())
            return
        super().handle_message(message)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        for change in copy.deepcopy(params.content_changes):  # pygls edits the positions it is given
            self.workspace.update_text_document(params.text_document, change)
        handler = self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)
        if handler is not None:
            yield handler, (params,), None

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any):
        self.exit_code = 0
        return (yield from super().lsp_shutdown(*args))

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any):
        self.exit_code = 0 if self._shutdown else 1
        return (yield from super().lsp_exit(*args))
