"""Importing the package registers its meta-architecture."""
from . import meta_arch  # noqa: F401
