"""Every test gets its own, empty result cache: no test reads another's results or the user's."""

import pytest

# The corpus holds code the analyser reads (projects with their own `tests/` folders), not tests.
collect_ignore_glob = ["corpus/*"]


@pytest.fixture(autouse=True)
def _private_result_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("ADVISOR_CACHE_DIR", str(tmp_path_factory.mktemp("advisor-cache")))
    # What a process decides once about its cache folders, and whether it has warned yet, is
    # decided afresh per test, as it is per run.
    import advisor.cache_files as cache_files
    import advisor.cache_folder as cache_folder

    monkeypatch.setattr(cache_folder, "_opened", {})
    monkeypatch.setattr(cache_files, "_noticed", False)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A result cache the test can look into."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("ADVISOR_CACHE_DIR", str(folder))
    return folder


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    try:
        return bool(torch.cuda.is_available())
    except Exception:  # noqa: BLE001 - a broken driver counts as no GPU
        return False


def pytest_collection_modifyitems(config, items):
    """Tests marked `cuda` are skipped without a CUDA device (torch is only imported if any exist)."""
    marked = [item for item in items if item.get_closest_marker("cuda") is not None]
    if not marked or _cuda_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device")
    for item in marked:
        item.add_marker(skip)
