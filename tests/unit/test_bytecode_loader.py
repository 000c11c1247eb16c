"""The package's cached-bytecode finder and `preload` (agent_hooks/__init__.py): the
hooks' start-up saving, which must never change what a module is.

Each test runs a fresh interpreter on a private copy of the source tree, so that
pyc files can be made stale, removed or broken without touching the real tree.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hook_runner import ROOT


@pytest.fixture
def src(tmp_path: Path) -> Path:
    copy = tmp_path / "src"
    shutil.copytree(ROOT / "src", copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def run(src: Path, code: str, *flags: str) -> dict[str, object]:
    script = f"import sys, json\nsys.path.insert(0, {str(src)!r})\n{code}"
    proc = subprocess.run(
        [sys.executable, "-I", "-S", *flags, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    out: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


DESCRIBE = """
import agent_hooks.switches as m, agent_hooks.reservations as pkg
print(json.dumps({
    "loader": getattr(m.__loader__, "__name__", type(m.__loader__).__name__),
    "file": m.__file__, "cached": m.__cached__, "package": m.__package__,
    "spec": [m.__spec__.name, m.__spec__.origin, m.__spec__.cached],
    "path": list(pkg.__path__), "pkg_package": pkg.__package__, "value": m.ON,
}))
"""


def test_a_cached_module_is_served_from_its_bytecode_with_the_usual_attributes(src: Path) -> None:
    first = run(src, DESCRIBE)  # writes the pyc files through the ordinary import
    second = run(src, DESCRIBE)
    assert first["loader"] != "_CachedBytecode" and second["loader"] == "_CachedBytecode"
    for key in ("file", "cached", "package", "spec", "path", "pkg_package", "value"):
        assert first[key] == second[key], key
    assert second["file"] == str(src / "agent_hooks" / "switches.py")


def test_a_stale_pyc_is_never_used(src: Path) -> None:
    run(src, DESCRIBE)
    module = src / "agent_hooks" / "switches.py"
    module.write_text(module.read_text().replace('ON = ("1",', 'ON = ("2",'))
    later = time.time() + 5
    os.utime(module, (later, later))
    assert run(src, DESCRIBE)["value"][0] == "2"  # type: ignore[index]


PRELOAD = """
import agent_hooks
names = ("agent_hooks.posix_fs", "agent_hooks.switches", "agent_hooks.reservations",
         "agent_hooks.reservations.reservation_index")
agent_hooks.preload(names)
import agent_hooks.reservations.reservation_index as index
print(json.dumps({
    "loaded": [n for n in names if n in sys.modules],
    "same": agent_hooks.reservations.reservation_index is index is sys.modules["agent_hooks.reservations.reservation_index"],
    "file": index.__file__, "package": index.__package__, "spec": index.__spec__.name,
    "path": list(sys.modules["agent_hooks.reservations"].__path__),
}))
"""


COMPILE = "import agent_hooks.switches, agent_hooks.reservations.reservation_index\nprint('{}')"


def test_preload_leaves_each_module_as_an_import_would(src: Path) -> None:
    run(src, COMPILE)
    out = run(src, PRELOAD)
    assert len(out["loaded"]) == 4 and out["same"] is True  # type: ignore[arg-type]
    assert out["file"] == str(src / "agent_hooks" / "reservations" / "reservation_index.py")
    assert out["package"] == "agent_hooks.reservations"
    assert out["spec"] == "agent_hooks.reservations.reservation_index"
    assert out["path"] == [str(src / "agent_hooks" / "reservations")]


def test_preload_stops_at_a_module_without_bytecode_and_imports_take_over(src: Path) -> None:
    run(src, COMPILE)
    for pyc in (src / "agent_hooks" / "__pycache__").glob("switches.*.pyc"):
        pyc.unlink()
    code = PRELOAD.replace(
        "agent_hooks.preload(names)",
        "agent_hooks.preload(names)\nstopped = [n for n in names if n in sys.modules]",
    )
    code = code.replace('"loaded": [n for n in names if n in sys.modules]', '"loaded": stopped')
    out = run(src, code)
    assert out["loaded"] == ["agent_hooks.posix_fs"]  # stopped at switches, none after it
    assert out["same"] is True  # the ordinary import loaded the rest


def test_preload_is_off_under_importtime(src: Path) -> None:
    run(src, COMPILE)
    code = "import agent_hooks\nagent_hooks.preload(('agent_hooks.switches',))\nprint(json.dumps({'loaded': 'agent_hooks.switches' in sys.modules}))"
    assert run(src, code, "-X", "importtime")["loaded"] is False


def test_a_module_that_fails_is_not_left_half_loaded(src: Path) -> None:
    broken = src / "agent_hooks" / "broken_probe.py"
    broken.write_text("VALUE = 1\nraise RuntimeError('boom')\n")
    code = (
        "import py_compile\n"
        f"py_compile.compile({str(broken)!r}, doraise=True)\n"
        "import agent_hooks\n"
        "try:\n    agent_hooks.preload(('agent_hooks.broken_probe',))\nexcept RuntimeError as exc:\n"
        "    failed = str(exc)\n"
        "print(json.dumps({'failed': failed, 'left': 'agent_hooks.broken_probe' in sys.modules}))"
    )
    out = run(src, code)
    assert out == {"failed": "boom", "left": False}


def test_python_dash_m_still_runs_the_cli(src: Path) -> None:
    """`get_code` serves runpy (install.sh runs `python -m agent_hooks.install.claude_settings`)."""
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(src)}
    for _ in range(2):  # the second run is served from cached bytecode
        proc = subprocess.run(
            [sys.executable, "-m", "agent_hooks.install.claude_settings", "--help"],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert proc.returncode == 0 and "usage" in proc.stdout.lower(), proc.stderr


def test_future_is_served_from_the_standard_librarys_bytecode(src: Path) -> None:
    """`from __future__ import annotations` imports `__future__` at run time: the finder
    serves it from the standard library's own cached bytecode, the same module."""
    run(src, "import agent_hooks.posix_fs\nprint('{}')")  # writes the package's pyc files
    out = run(
        src,
        "import agent_hooks, agent_hooks.posix_fs, __future__, importlib.util\n"
        "print(json.dumps({'loader': __future__.__loader__.__name__, "
        "'file': __future__.__file__, 'flag': __future__.annotations.compiler_flag, "
        "'std': importlib.util.find_spec('__future__').origin}))",
    )
    assert out["loader"] == "_CachedBytecode"
    assert out["file"] == out["std"] and str(out["file"]).endswith("/__future__.py")
    assert out["flag"] == 16777216  # CO_FUTURE_ANNOTATIONS


ACCELERATOR = """
import {name} as module
print(repr({{
    "loader": type(module.__loader__).__name__, "file": module.__file__,
    "spec": [module.__spec__.name, module.__spec__.origin, module.__spec__.has_location,
             module.__spec__.cached, module.__spec__.parent,
             type(module.__spec__.loader).__name__],
    "finders": [getattr(f, "__name__", type(f).__name__) for f in sys.meta_path],
    "searched": any(p.endswith("/lib-dynload") for p in sys.path_importer_cache),
}}))
"""


def run_fresh(src: Path, code: str) -> dict[str, object]:
    """`run` without importing `json` first (it would load `_json` before the test does)."""
    script = f"import sys\nsys.path.insert(0, {str(src)!r})\n{code}"
    proc = subprocess.run(
        [sys.executable, "-I", "-S", "-c", script], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    out: dict[str, object] = ast.literal_eval(proc.stdout.strip().splitlines()[-1])
    return out


@pytest.mark.parametrize("name", ["_json", "_blake2"])
def test_an_accelerator_is_found_without_the_path_search_and_is_the_same_module(
    src: Path, name: str
) -> None:
    """`_json` and `_blake2` (the extension modules the hooks load: JSON, and the hash
    of kept versions) are found by the finder where the standard path finder finds
    them, without listing `lib-dynload`, loaded by the standard extension loader, with
    the same spec."""
    run(src, "import agent_hooks.posix_fs\nprint('{}')")  # writes the package's pyc files
    # Asked by name, the finder answers for these alone among the standard library, and
    # not at all where this interpreter has one built in.
    probe = run(src, "import agent_hooks\nf = sys.meta_path[0]\nprint(json.dumps({"
                f"'asked': f.find_spec({name!r}) is not None, 'other': f.find_spec('_csv'), "
                "'os': f.find_spec('os')}))")  # fmt: skip
    built_in = name in sys.builtin_module_names
    assert probe == {"asked": not built_in, "other": None, "os": None}
    if built_in:
        return
    code = ACCELERATOR.format(name=name)
    standard = run_fresh(src, code)
    ours = run_fresh(src, "import agent_hooks\n" + code)
    assert standard["finders"][0] != "_CachedBytecode" and ours["finders"][0] == "_CachedBytecode"
    assert standard["searched"] and not ours["searched"]  # lib-dynload never listed
    assert ours["loader"] == standard["loader"] == "ExtensionFileLoader"
    assert ours["file"] == standard["file"] and ours["spec"] == standard["spec"]
    assert f"/lib-dynload/{name}" in str(ours["file"])


EMPTY_PACKAGE = """
import builtins
import agent_hooks.gate as pkg
print(json.dumps({
    "loader": getattr(pkg.__loader__, "__name__", type(pkg.__loader__).__name__),
    "names": sorted(vars(pkg)), "builtins": pkg.__builtins__ is builtins.__dict__,
    "file": pkg.__file__, "cached": pkg.__cached__, "path": list(pkg.__path__),
    "spec": [pkg.__spec__.name, pkg.__spec__.origin, pkg.__spec__.cached, pkg.__spec__.parent],
}))
"""


def test_an_empty_package_is_left_as_an_import_leaves_it_without_reading_its_pyc(
    src: Path,
) -> None:
    """An empty `__init__.py` is served without reading, unmarshalling or running its
    bytecode: the package ends with the same attributes as the standard import gives it."""
    assert (src / "agent_hooks" / "gate" / "__init__.py").stat().st_size == 0
    standard = (
        "import agent_hooks\n"
        "sys.meta_path[:] = [f for f in sys.meta_path if f.__name__ != '_CachedBytecode']\n"
    )
    first = run(src, standard + EMPTY_PACKAGE)  # the standard import (writes the pyc files)
    for pyc in (src / "agent_hooks" / "gate" / "__pycache__").glob("__init__.*.pyc"):
        pyc.write_bytes(b"not bytecode")  # never read: nothing to run
    second = run(src, EMPTY_PACKAGE)
    assert first["loader"] != "_CachedBytecode" and second["loader"] == "_CachedBytecode"
    for key in ("names", "builtins", "file", "cached", "path", "spec"):
        assert first[key] == second[key], key
    assert second["builtins"] is True


def test_a_truncated_pyc_is_never_used(src: Path) -> None:
    """A module's pyc cut short (a crash while it was written) is not served: the standard
    import compiles the source again — the module is never loaded empty."""
    run(src, DESCRIBE)
    for pyc in (src / "agent_hooks" / "__pycache__").glob("switches.*.pyc"):
        pyc.write_bytes(b"")
    out = run(src, DESCRIBE)
    assert out["loader"] != "_CachedBytecode" and out["value"][0] == "1"  # type: ignore[index]


def test_a_package_wins_over_a_module_of_the_same_name(src: Path) -> None:
    """As the standard finder: `x/__init__.py` beside `x.py` is the package."""
    (src / "agent_hooks" / "gate.py").write_text("WHICH = 'module'\n")
    (src / "agent_hooks" / "gate" / "__init__.py").write_text("WHICH = 'package'\n")
    code = "import agent_hooks.gate as g\nprint(json.dumps({'which': g.WHICH, 'loader': getattr(g.__loader__, '__name__', '')}))"
    first = run(src, code)
    second = run(src, code)
    assert first["which"] == second["which"] == "package"
    assert second["loader"] == "_CachedBytecode"
