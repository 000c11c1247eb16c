"""reservations.enforcement: locating a directory entry a command acts on itself
(`resolve_entry`): its parent's symlinks resolved, its own name kept. (Blocking
and owning are tested with the index, in test_reservation_index.py.)"""

from __future__ import annotations

import os
from pathlib import Path

from agent_hooks.gate import places


def test_an_entry_keeps_its_name_and_resolves_its_parent(tmp_path: Path) -> None:
    real = Path(os.path.realpath(tmp_path))
    (real / "proj" / "src").mkdir(parents=True)
    (real / "elsewhere").mkdir()
    (real / "proj" / "src" / "out").symlink_to(real / "elsewhere")
    (real / "alias").symlink_to(real / "proj" / "src")
    assert places.resolve_entry(f"{real}/proj/src/out") == f"{real}/proj/src/out"
    assert places.resolve_entry(f"{real}/alias/out") == f"{real}/proj/src/out"
    assert places.resolve_entry(f"{real}/alias/new") == f"{real}/proj/src/new"
    assert places.resolve_entry(f"{real}/proj/src/out/f") == f"{real}/elsewhere/f"


def test_dot_names_and_the_root_resolve_whole(tmp_path: Path) -> None:
    real = Path(os.path.realpath(tmp_path))
    (real / "d").mkdir()
    (real / "l").symlink_to(real / "d")
    assert places.resolve_entry(f"{real}/l/.") == f"{real}/d"
    assert places.resolve_entry("/") == "/"
