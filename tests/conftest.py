"""Every test gets its own, empty result cache: no test reads another's results or the user's."""

import pytest


@pytest.fixture(autouse=True)
def _private_result_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("ADVISOR_CACHE_DIR", str(tmp_path_factory.mktemp("advisor-cache")))
