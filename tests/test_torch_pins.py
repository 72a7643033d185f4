"""The torch release a project pins (project/torch_pins.py)."""
from advisor.project.torch_pins import oldest_minimum, oldest_pin, pin_files


def test_the_oldest_exact_pin_wins_and_other_packages_do_not_count():
    texts = ["torchvision==0.15.2\ntorch==2.0.1+cu118\n", "dependencies:\n  - pytorch=1.10.1\n"]
    assert oldest_pin(texts, ["Install:\n\n    pip install torch==1.9.1 torchaudio==0.9.1\n"]) == (1, 9)


def test_a_readme_pins_only_in_its_install_commands():
    prose = "Tested with `torch==1.13.1` in a requirements file; any release from 2.0 works.\n"
    assert oldest_pin([], [prose]) is None
    assert oldest_pin([], [prose + "conda install pytorch=2.1.0 -c pytorch\n"]) == (2, 1)


def test_a_readme_list_of_the_environment_pins_what_it_writes_with_an_equals_sign():
    listed = "## Requirements\n- Python = 3.6\n- PyTorch = 1.9.1\n- Torchvision = 0.10.1\n"
    assert oldest_pin([], [listed]) == (1, 9)
    # Look-alikes: a sentence, a minimum and another package's item pin nothing.
    others = "- PyTorch 1.9 or newer works\n- torch >= 1.9\n* torchvision = 0.10.1\nWe used PyTorch = 1.9 here.\n"
    assert oldest_pin([], [others]) is None


def test_ranges_and_other_names_are_no_pin():
    assert oldest_pin(["torch>=1.7", "pytorch-lightning==1.9.0", "deeptorch==0.1.0", "torch"]) is None


def test_requirement_files_and_dockerfiles_are_read(tmp_path):
    (tmp_path / "requirements-dev.txt").write_text("torch==2.1.0\n")
    (tmp_path / "docker").mkdir()
    (tmp_path / "docker" / "Dockerfile").write_text("RUN pip install torch==1.10.1\n")
    (tmp_path / "train.py").write_text("import torch\n")
    found = {p.replace(str(tmp_path), "") for p in pin_files(str(tmp_path))}
    assert found == {"/requirements-dev.txt", "/docker/Dockerfile"}


def test_a_sub_folder_readme_pins_only_the_files_under_it():
    from pathlib import Path

    from advisor.project.view import ProjectView

    root = Path(__file__).resolve().parent / "corpus" / "projects" / "pinned_subprojects"
    view = ProjectView(str(root), lambda path, text, reexports=None: None)
    assert view.pinned_torch(str(root / "old_paper" / "train.py")) == (1, 7)
    assert view.pinned_torch(str(root / "new_paper" / "train.py")) is None
    assert view.pinned_torch() is None


def test_the_supported_minimum_comes_from_what_every_install_needs():
    pyproject = '[project]\ndependencies = [\n    "torch>=1.13.1",\n]\n[project.optional-dependencies]\nx = ["torch>=1.2"]\n'
    assert oldest_minimum([("pyproject.toml", pyproject)]) == (1, 13)
    setup_py = 'setup(install_requires=["torch >= 1.8", "numpy"], extras_require={"x": ["torch>=1.2"]})'
    assert oldest_minimum([("setup.py", setup_py)]) == (1, 8)
    setup_cfg = "[options]\ninstall_requires =\n    torch>=1.9.0\n    numpy\n[options.extras_require]\nx = torch>=1.1\n"
    assert oldest_minimum([("setup.cfg", setup_cfg)]) == (1, 9)
    assert oldest_minimum([("requirements.txt", "torch>=2.0\n")]) == (2, 0)


def test_an_optional_extra_or_an_install_image_declares_no_supported_range():
    extra = '[project]\ndependencies = ["rich"]\n[project.optional-dependencies]\nmeasure = ["torch>=2.1"]\n'
    assert oldest_minimum([("pyproject.toml", extra), ("Dockerfile", "RUN pip install 'torch>=1.8'\n")]) is None


def test_poetry_dependencies_pin_or_bound_torch_and_development_groups_do_not_count():
    exact = '[tool.poetry.dependencies]\npython = "^3.10"\ntorch = { version = "2.2.1+cu121", source = "cu121" }\n'
    assert oldest_pin([exact]) == (2, 2)
    assert oldest_minimum([("pyproject.toml", exact)]) == (2, 2)
    caret = '[tool.poetry.dependencies]\ntorch = "^2.1"\n\n[tool.poetry.group.dev.dependencies]\ntorch = "1.13.1"\n'
    assert oldest_pin([caret]) is None  # a range pins no release; the dev group is not the project's
    assert oldest_minimum([("pyproject.toml", caret)]) == (2, 1)
    assert oldest_minimum([("pyproject.toml", '[tool.poetry.dependencies]\ntorchvision = "^0.15"\n')]) is None
