"""The language server face of the engine (`advisor lsp`).

Nothing here is imported by static analysis; pygls and lsprotocol come with the `lsp` extra and
are imported only by `server.py`, so that `advisor check` works without them.
"""
