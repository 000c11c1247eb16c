#!/usr/bin/env python3
"""Start-up cost of what a hook imports and of how a hook is launched: wall time
of `python -I -S -c "import X"` (or of a launcher) relative to the same
interpreter's `python -I -S -c pass`, measured side by side (A B A B …) as in
bench/hooks.py. Prints median ratios and the baseline's median in ms; exits 0
(a report, not a test). docs/measurements.md records what it printed.

    python bench/imports.py [--runs 40] [--shim PATH] [--only imports|launchers]

Run it with a venv that has the project's dependencies (./test.sh makes .venv):
third-party packages are found in that venv's site-packages, appended to
sys.path as hooks/entry.py does. `--shim` names a version manager's `python`
shim (pyenv, asdf) to time; by default the first `python3` on PATH whose path
contains `shims` is used, if any. `uv run` is timed when `uv` is on PATH.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from hooks import ENTRY, ROOT, compare  # bench/hooks.py

SRC = ROOT / "src"
SITE = sysconfig.get_paths()["purelib"]

# One screenful (50 lines) of ordinary code, for the cost of compiling a script.
SCREENFUL = "".join(
    f"def f_NN_{i}(a, b=None):\n"
    f"    '''Helper {i}.'''\n"
    f"    if b is None:\n"
    f"        b = [a, {i}]\n"
    f"    for x in b:\n"
    f"        a = (a, x)\n"
    f"    return (a, b, {i})\n"
    "\n"
    "\n"
    "\n"
    for i in range(5)
)

PIP_WRAPPER = """#!{python}
# -*- coding: utf-8 -*-
import re
import sys
from tinypkg.cli import main
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit(main())
"""


def importing(python: str, modules: str, third_party: bool = False) -> list[str]:
    code = f"import sys; sys.path.append({SITE!r}); " if third_party else ""
    return [python, "-I", "-S", "-c", code + modules]


def ours(python: str, module: str | None) -> list[str]:
    code = f"import sys; sys.path.insert(0, {str(SRC)!r})"
    return [python, "-I", "-S", "-c", code + (f"; import {module}" if module else "")]


def script(tmp: Path, screens: int) -> Path:
    path = tmp / f"script{screens}.py"
    path.write_text("".join(SCREENFUL.replace("NN", str(n)) for n in range(screens)))
    return path


def pyc_size(module: str) -> int:
    """Size of the module's cached bytecode (compiled here if missing)."""
    import importlib.util
    import py_compile

    source = SRC / (module.replace(".", "/") + ".py")
    cached = Path(importlib.util.cache_from_source(str(source)))
    if not cached.exists():
        py_compile.compile(str(source), cfile=str(cached))
    return cached.stat().st_size


def baseline_ms(python: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([python, "-I", "-S", "-c", "pass"], check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def report(title: str, ratios: dict[str, float]) -> None:
    print(title)
    for name, ratio in ratios.items():
        print(f"  {name:<66} {ratio:5.2f}x")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--shim", help="a version manager's python shim to time")
    parser.add_argument("--only", choices=["imports", "launchers"])
    args = parser.parse_args()
    python = sys.executable  # the venv's interpreter: its site-packages has the dependencies
    real = os.path.realpath(python)
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        env = {
            "HOME": str(tmp / "home"),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "AGENT_NAME": "bench__cc_me",
            "CLAUDE_PROJECT_DIR": str(tmp),
            "PYTHONPATH": str(tmp),  # for the launcher cases; -I ignores it
        }
        for name in ("PYENV_ROOT", "PYENV_VERSION", "ASDF_DIR", "ASDF_DATA_DIR"):
            if name in os.environ:
                env[name] = os.environ[name]
        print(
            f"python: {python} ({sys.version.split()[0]}); {args.runs} paired runs; "
            f"ratio = command / `python -I -S -c pass` ({baseline_ms(python, 20):.1f} ms median here)"
        )
        if args.only in (None, "imports"):
            big = "agent_hooks.shell.commands"
            cases = {
                "import os": importing(python, "import os"),
                "import _json": importing(python, "import _json"),
                "import fcntl": importing(python, "import fcntl"),
                "import zlib": importing(python, "import zlib"),
                "import json": importing(python, "import json"),
                "import re": importing(python, "import re"),
                "import typing": importing(python, "import typing"),
                "import orjson": importing(python, "import orjson", True),
                "import pathspec": importing(python, "import pathspec", True),
                "import orjson, pathspec": importing(python, "import orjson, pathspec", True),
                "import click": importing(python, "import click", True),
                "import filelock": importing(python, "import filelock", True),
                "src on sys.path, nothing of ours imported": ours(python, None),
                "+ agent_hooks.posix_fs (package __init__ + one small module)": ours(
                    python, "agent_hooks.posix_fs"
                ),
                f"+ {big} (lexer, words, commands)": ours(python, big),
                "a script of 1 screenful (50 lines)": [python, "-I", "-S", str(script(tmp, 1))],
                "a script of 10 screenfuls": [python, "-I", "-S", str(script(tmp, 10))],
            }
            for cmd in cases.values():  # .pyc files of our modules exist before timing
                subprocess.run(cmd, check=False, env=env)
            report(
                "imports (each under -I -S; third-party from the venv's site-packages):",
                compare(python, {k: (v, None) for k, v in cases.items()}, env, args.runs),
            )
            print(
                "  .pyc sizes: "
                + ", ".join(
                    f"{m} {pyc_size(m) / 1024:.1f} KB"
                    for m in (
                        "agent_hooks.posix_fs",
                        "agent_hooks.shell.lexer",
                        "agent_hooks.shell.words",
                        big,
                    )
                )
            )
        if args.only in (None, "launchers"):
            pkg = tmp / "tinypkg"
            pkg.mkdir()
            (pkg / "__init__.py").write_text("")
            (pkg / "__main__.py").write_text("pass\n")
            (pkg / "cli.py").write_text("def main():\n    return 0\n")
            wrapper = tmp / "tinypkg-cli"
            wrapper.write_text(PIP_WRAPPER.format(python=python))
            wrapper.chmod(0o755)
            status_in = tmp / "statusline.json"
            status_in.write_text(json.dumps({"session_id": "s1", "cwd": str(tmp)}))
            cli = (
                f"import sys; sys.path.insert(0, {str(SRC)!r}); "
                "sys.argv[1:] = ['statusline']; from agent_hooks.cli import main; main()"
            )
            launchers: dict[str, tuple[list[str], Path | None]] = {
                "python -c pass (site imported)": ([python, "-c", "pass"], None),
                "python -m tinypkg (site imported)": ([python, "-m", "tinypkg"], None),
                "a pip console-script wrapper (imports re)": ([str(wrapper)], None),
                "status line: python -IS hooks/entry.py StatusLine": (
                    [real, "-IS", str(ENTRY), "StatusLine"],
                    status_in,
                ),
                "status line through the click CLI (agent-hooks statusline)": (
                    [python, "-c", cli],
                    status_in,
                ),
            }
            shim = args.shim or shutil.which("python3", path=env["PATH"])
            if shim and (args.shim or "shims" in shim):
                launchers[f"{shim} -c pass (version manager's shim)"] = (
                    [shim, "-c", "pass"],
                    None,
                )
            else:
                print("  (no version manager's shim found: pass --shim PATH)")
            uv = shutil.which("uv", path=env["PATH"])
            if uv:
                launchers["uv run --no-project python -c pass"] = (
                    [uv, "run", "--no-project", "python", "-c", "pass"],
                    None,
                )
            else:
                print("  (uv not on PATH: `uv run` not timed)")
            report("launchers:", compare(python, launchers, env, args.runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
