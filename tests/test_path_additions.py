"""Folders a script adds to `sys.path` (advisor/project/path_additions.py)."""

from __future__ import annotations

import os

from advisor.project.path_additions import path_additions


def _tree(tmp_path):
    for folder in ("repo/tools", "repo/lib", "repo/src/pkg", "repo/tools/core"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
    return tmp_path / "repo"


def _added(tmp_path, text):
    root = _tree(tmp_path)
    script = root / "tools" / "train.py"
    return [os.path.relpath(p, root) for p in path_additions(text, str(script), str(root))]


def test_a_literal_is_read_from_the_script_folder_and_the_root(tmp_path):
    assert _added(tmp_path, 'import sys\nsys.path.append("core")\nsys.path.insert(0, "lib")\n') == [
        os.path.join("tools", "core"),
        "lib",
    ]


def test_a_folder_joined_from_a_name_bound_to_the_file_place(tmp_path):
    text = (
        "import os.path as osp\nimport sys\n"
        "this_dir = osp.dirname(__file__)\n"
        "lib_path = osp.join(this_dir, '..', 'lib')\n"
        "sys.path.insert(0, lib_path)\n"
    )
    assert _added(tmp_path, text) == ["lib"]


def test_inline_dirname_chains_count_their_levels(tmp_path):
    text = (
        "import os, sys\n"
        "sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'src'))\n"
        "sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))\n"
    )
    assert _added(tmp_path, text) == ["src", "."]


def test_a_join_from_the_file_itself_goes_through_it(tmp_path):
    text = "import os, sys\nsys.path.append(os.path.join(os.path.abspath(__file__), '..', '..', 'lib'))\n"
    assert _added(tmp_path, text) == ["lib"]


def test_folders_that_do_not_exist_and_texts_without_sys_path_add_nothing(tmp_path):
    assert _added(tmp_path, "import sys\nsys.path.append('missing')\n") == []
    assert _added(tmp_path, "import os\nhere = os.path.dirname(__file__)\nlib = os.path.join(here, '..', 'lib')\n") == []


def test_a_formatted_or_concatenated_path_from_the_file_place(tmp_path):
    text = (
        "import os, sys\n"
        "here = os.path.dirname(os.path.abspath(__file__))\n"
        "sys.path.append(f'{here}/../src/pkg')\n"
        "sys.path.insert(0, here + '/../lib')\n"
        "sys.path.append(f'{os.path.dirname(__file__)}/core')\n"
    )
    assert _added(tmp_path, text) == [os.path.join("src", "pkg"), os.path.join("tools", "core"), "lib"]


def test_a_formatted_path_from_another_name_adds_nothing(tmp_path):
    text = "import sys\nsys.path.append(f'{home}/lib')\nsys.path.append(prefix + '/lib')\n"
    assert _added(tmp_path, text) == []
