#!/usr/bin/env python3
"""Hook cost in instructions: each hook case of `bench/hooks.py` run once under
`valgrind --tool=callgrind`, against `python -I -S -c pass`. Instruction counts do
not move with the machine's load (wall ratios do), so this is how a change is
compared with the one before it on a busy machine. The cases: Claude Code's alone in
a project, Codex's, Gemini CLI's, opencode's and Qwen Code's beside them (an edit, a shell
write), a writer
holding 10 files with a long trail (the net under the gate), a 50,000-entry trail.

    python bench/instructions.py [--checkout DIR] [--python /abs/python] [--remote] [--scale]

`--checkout DIR` measures another checkout's hooks (its `hooks/entry.py` and `src/`,
e.g. a `git worktree` of an earlier commit) with this script's cases; `--remote` adds
the cases of a ledger shared with another machine (`bench/hooks.py --remote`);
`--scale` writing into a directory where 100 other agents hold 10 reservations and 50
leases each, while this agent holds 10 files (`bench/hooks.py --scale`). Needs valgrind.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import hooks as bench  # noqa: E402  (bench/hooks.py: the same cases and payloads)


def count(cmd: list[str], stdin: Path | None, env: dict[str, str]) -> int:
    """Instructions `cmd` executes (callgrind's total)."""
    with open(stdin or os.devnull, "rb") as handle:
        proc = subprocess.run(
            ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd],
            stdin=handle,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
            check=False,
        )
    found = re.search(r"Collected : (\d+)", proc.stderr)
    if found is None:
        raise SystemExit(f"valgrind gave no count: {proc.stderr[-300:]}")
    return int(found.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", type=Path, default=HERE.parent)
    parser.add_argument("--python", default=os.path.realpath(sys.executable))
    parser.add_argument("--remote", action="store_true", help="also a shared ledger's cases")
    parser.add_argument("--scale", action="store_true", help="also among 100 other agents")
    args = parser.parse_args()
    python = args.python
    entry = (args.checkout / "hooks" / "entry.py").resolve()
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        (tmp / "hooks").mkdir()
        (tmp / "src").symlink_to(args.checkout.resolve() / "src")
        compiled = tmp / "hooks" / "entry.pyc"
        subprocess.run(
            [python, "-I", "-c", "import py_compile, sys; py_compile.compile(*sys.argv[1:3], doraise=True)",
             str(entry), str(compiled)],
            check=True,
        )  # fmt: skip
        project, env = bench.new_project(tmp)
        env["CLAUDE_PID"] = str(os.getpid())
        hook = [python, "-IS", str(compiled)]
        bench.start_session(hook, env, tmp, project)
        ledger = project / ".git" / "agent-hooks"
        bare = count([python, "-I", "-S", "-c", "pass"], None, env)
        print(f"python -I -S -c pass: {bare / 1e6:.2f} M instructions; checkout {args.checkout}")

        def show(
            name: str, event: str, payload: Path, before: object = None, where: Any = None
        ) -> None:
            environ = where or env
            for _ in range(2):  # the same case twice first: bytecode cached, files made
                if callable(before):
                    before()
                with payload.open("rb") as handle:
                    subprocess.run(
                        [*hook, *event.split()],
                        stdin=handle,
                        stdout=subprocess.DEVNULL,
                        env=environ,
                    )
            if callable(before):
                before()
            n = count([*hook, *event.split()], payload, environ)
            print(f"  {name:<38} {n / 1e6:6.2f} M  {n / bare:5.2f}x")

        def no_lease(rel: str) -> object:
            return lambda: (ledger / "leases" / rel).unlink(missing_ok=True)

        show("PreToolUse Write (lease)", "PreToolUse",
             bench.payload_file(tmp, "PreToolUse_Write", project), no_lease("a.txt"))  # fmt: skip
        show("PreToolUse Write (renew)", "PreToolUse",
             bench.payload_file(tmp, "PreToolUse_Write", project))  # fmt: skip
        show("PreToolUse Bash", "PreToolUse", bench.payload_file(tmp, "PreToolUse_Bash", project))
        show("PostToolUse Edit", "PostToolUse", bench.payload_file(tmp, "PostToolUse_Edit", project),
             lambda: (project / "a.txt").write_text("alpha 2\n"))  # fmt: skip
        runs = iter(range(1 << 30))
        show(bench.HELD_EDIT, "PostToolUse",
             bench.payload_file(tmp, "PostToolUse_Edit", project, bench.HELD_FILE),
             lambda: bench.held_edit(hook, env, tmp, project, bench.HELD_FILE, bench.HELD_SIZE)(
                 next(runs)))  # fmt: skip
        show(
            "PostToolUse Read", "PostToolUse", bench.payload_file(tmp, "PostToolUse_Read", project)
        )
        big = project / "big.log"  # a file read whole is fingerprinted whole (up to 2 MiB)
        big.write_bytes(bytes(range(256)) * 1024)
        show("PostToolUse Read (256 KiB)", "PostToolUse",
             bench.payload_file(tmp, "PostToolUse_Read", project, "big.log"),
             lambda: big.write_bytes(bytes(range(255, -1, -1)) * 1024))  # fmt: skip
        show("PostToolUse Bash (lease)", "PostToolUse",
             bench.payload_file(tmp, "PostToolUse_Bash", project), no_lease("b.txt"))  # fmt: skip
        for rel in ("c.txt", "d.txt"):
            (project / rel).write_text("alpha\nline two\n")
        for client, label, pre, post, edit, shell in (
            ("codex", "Codex", "PreToolUse", "PostToolUse", "apply_patch_patch_update",
             "Bash_shell_write"),
            ("gemini", "Gemini", "BeforeTool", "AfterTool", "write_file", "run_shell_command"),
            ("opencode", "opencode", "tool.execute.before", "tool.execute.after", "edit", "bash"),
            ("qwen", "Qwen", "PreToolUse", "PostToolUse", "write_file", "run_shell_command"),
        ):  # fmt: skip
            for event, kind, fixture, target, fresh in (
                (pre, "edit (lease)", f"{client}/{pre}_{edit}", "c.txt", no_lease("c.txt")),
                (pre, "shell", f"{client}/{pre}_{shell}", "d.txt", None),
                (post, "edit", f"{client}/{post}_{edit}", "c.txt",
                 lambda: (project / "c.txt").write_text("alpha 2\n")),
                (post, "shell (lease)", f"{client}/{post}_{shell}", "d.txt", no_lease("d.txt")),
            ):  # fmt: skip
                payload = bench.payload_file(tmp, fixture, project, target)
                show(f"{label} {event} {kind}", f"{client} {event}", payload, fresh)
        # The net under the gate (bench/hooks.py's "with 10 held files and a long trail").
        held = bench.hold_files(hook, env, tmp, project, 10)
        bench.fill_trail(env, project, 1000)
        print("with 10 held files and a long trail (1,000 files a list):")
        show("PostToolUse Edit (held)", "PostToolUse", held,
             lambda: (project / "held0.py").write_text("v changed\n"))  # fmt: skip
        show("PostToolUse Read (10 held)", "PostToolUse",
             bench.payload_file(tmp, "PostToolUse_Read", project))  # fmt: skip
        show("PostToolUse Bash (10 held)", "PostToolUse",
             bench.payload_file(tmp, "PostToolUse_Bash", project), no_lease("b.txt"))  # fmt: skip
        state = Path(env["HOME"]) / ".claude" / "state-bench__cc_me.json"
        doc = json.loads(state.read_text())
        for field in ("files_created", "files_modified"):
            doc[field] = [f"{project}/gen/{field}/{n}.py" for n in range(50_000)]
        state.write_text(json.dumps(doc))
        read = bench.payload_file(tmp, "PostToolUse_Read", project)
        count([*hook, "PostToolUse"], read, env)  # the first moves the 50,000 beside the state
        show("PostToolUse Read (50,000-entry trail)", "PostToolUse", read)
        if args.scale:
            bench.fill_trail(env, project, 1000)  # windows full again, each with fingerprints
            bench.seed_reservations(env, project, range(100), 10)
            bench.seed_leases(env, project, range(1000, 1100), 50)
            print("among 100 agents x 10 reservations and 100 x 50 leases, 10 files held, a"
                  " long trail:")  # fmt: skip
            show("PreToolUse Write (lease)", "PreToolUse",
                 bench.payload_file(tmp, "PreToolUse_Write", project, "pkg3/free/x.py"),
                 no_lease("pkg3%2Ffree%2Fx.py"))  # fmt: skip
            show("PreToolUse Bash", "PreToolUse",
                 bench.payload_file(tmp, "PreToolUse_Bash", project, "pkg3/free/y.txt"))  # fmt: skip
            show("PostToolUse Bash (lease)", "PostToolUse",
                 bench.payload_file(tmp, "PostToolUse_Bash", project, "pkg3/free/y.txt"),
                 no_lease("pkg3%2Ffree%2Fy.txt"))  # fmt: skip
        if args.remote:
            shared, shared_env, shared_ledger = bench.shared_project(tmp)
            from ledger_machines import wait_for_syncs

            subprocess.run([*hook, "SessionStart"], env=shared_env, stdout=subprocess.DEVNULL,
                           stdin=bench.payload_file(tmp, "SessionStart_startup", shared).open("rb"),
                           check=True)  # fmt: skip
            print("the ledger shared with another machine through a git remote:")
            payloads = tmp / "remote-payloads"
            payloads.mkdir()
            cases = [
                ("PreToolUse Write (lease)", "PreToolUse", "PreToolUse_Write", None),
                ("PreToolUse Write, leased elsewhere", "PreToolUse", "PreToolUse_Write",
                 "pkg0/lease0.py"),
                ("PreToolUse Bash", "PreToolUse", "PreToolUse_Bash", None),
                ("PostToolUse Edit", "PostToolUse", "PostToolUse_Edit", None),
                ("Stop", "Stop", "Stop", None),
            ]  # fmt: skip
            for name, event, fixture, target in cases:
                payload = bench.payload_file(payloads, fixture, shared, target)
                fresh = (  # a new lease each time, as in the local case
                    (lambda: (shared_ledger / "leases" / "a.txt").unlink(missing_ok=True))
                    if name == "PreToolUse Write (lease)"
                    else None
                )
                show(name, event, payload, fresh, shared_env)
                wait_for_syncs(shared_ledger)  # a sync a hook started ends before the next
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
