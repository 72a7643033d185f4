"""Importing torch without its "Failed to initialize NumPy" warning.

torch warns on import when NumPy is missing. Neither the probes nor `advisor trace` use NumPy,
and torch itself runs without it, so in advisor's own processes that warning is noise that
reads like a fault of the user's setup. Any other import warning still shows.
"""

from __future__ import annotations

import warnings

NUMPY_WARNING = r"Failed to initialize NumPy"


def import_torch():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=NUMPY_WARNING)
        import torch
    return torch
