"""Renderers for a run's results: rich text, flake8-style concise lines, and ruff-shaped JSON."""
