"""The rich Console the text report goes through, and whether it may colour it.

`--color auto` (the default) colours a terminal and nothing else; the NO_COLOR convention
(https://no-color.org: set and not empty) turns colour off, and FORCE_COLOR (set and not empty)
turns it on where output is piped, NO_COLOR winning when both are set. `--color always` and
`--color never` override both variables. Without colour no escape sequence at all is written
(not even bold).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: start-up is most of a warm run
    from typing import TextIO

# A piped report keeps each table row on one line.
PIPED_WIDTH = 200


def wants_color(choice: str, out: TextIO) -> bool:
    """``choice``: "auto", "always" or "never"."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    try:
        return out.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def report_console(out: TextIO, choice: str = "auto"):
    from rich.console import Console

    color = wants_color(choice, out)
    try:
        terminal = out is sys.stdout and out.isatty()
    except (AttributeError, ValueError, OSError):
        terminal = False
    width = None if terminal else PIPED_WIDTH
    # No emoji codes anywhere: `train.py:100:5` would print its `:100:` as an emoji.
    if not color:
        return Console(file=out, highlight=False, emoji=False, soft_wrap=False, color_system=None, force_terminal=False,
                       no_color=True, width=width)
    console = Console(file=out, highlight=False, emoji=False, soft_wrap=False, force_terminal=True, no_color=False,
                      width=width)
    if console.color_system is None:  # TERM=dumb or unset: still the 16 standard colours
        console = Console(file=out, highlight=False, emoji=False, soft_wrap=False, force_terminal=True, no_color=False,
                          width=width, color_system="standard")
    return console
