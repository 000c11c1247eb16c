#!/usr/bin/env python3
"""Hook start-up benchmark: wall time of each hook process relative to the same
interpreter's `python -I -S -c pass`, measured side by side (A B A B …) so drift
of a shared machine cancels out. Prints median ratios; exits 0 (it is a report,
not a test). The budget for PreToolUse and PostToolUse is 1.5x.

    python bench/hooks.py [--runs 60] [--python /abs/python] [--remote] [--scale]
                          [--against CHECKOUT]

Claude Code's cases run `entry.pyc <Event>`; Codex's, Gemini CLI's, opencode's and Qwen
Code's run `entry.pyc codex <Event>` (`gemini`, `opencode`, `qwen`) on their captured payloads
(tests/fixtures/payloads/codex/, gemini/, opencode/, qwen/), printed beside Claude's: an edit
(a patch, a write_file, an edit) and a shell write before and after it ran. Their shell
commands come with no list of changed files, so a PostToolUse of one that may write reads it
with the parser. opencode's hooks are spawned by its plugin: what the plugin's own spawn costs
is measured apart (bench/opencode_plugin.py).

Hooks run as installed: the entry script compiled (`hooks/entry.pyc`, which install.sh
makes; a script given as source is compiled on every run), beside a link to this
checkout's `src/`. `--source` runs `hooks/entry.py` instead (the plugin form).

"(lease)" cases take a new lease each run (a write in the ledger); "(renew)"
renews the agent's own fresh lease (no write).

--remote adds the "remote on" condition (docs/adr/0016): the same hooks in a real
git repository whose ledger is shared through a bare remote (file://), synced
with a second machine (a clone with its own HOME and AGENT_HOOKS_HOST) that holds
50 leases, so PreToolUse reads the view of the other machine's leases (no
reservation: what those cost is --scale's), and starts the detached sync whenever it is due (every 15 s) as it would
in use; plus an edit of a file the other machine leases (told in the context).

--against CHECKOUT runs Claude Code's cases, and a lease-taking edit and shell write of Codex
and Gemini CLI, with another checkout's hooks too (e.g. a `git worktree` of an earlier
commit; in a project and HOME of their own), each case's run beside this checkout's, run
after run, so the two ratios meet the same machine.

--scale adds the scale cases, in a project of their own whose agent has just started:
PreToolUse (a Write, and a Bash command, into a directory where others hold things)
and PostToolUse (a Bash command that changed a file there, which it then leases) with
one other agent holding 10 reservations, then with 100 agents holding 10 each; then
with one other agent holding 50 leases, then 100 agents holding 50 each (issue 18's
condition: fingerprints on, among 100 writers x 50 leases). The larger case must stay
within 1.2x of the smaller, and both within the 1.5x budget. Then all of it at once:
the same cases once the agent holds 10 files and its trail is long. Last, a held file
found changed by someone else, before and after 100 writers' shell commands are kept
(the check reads them all for whose ran then: docs/adr/0027).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENTRY = ROOT / "hooks" / "entry.py"
PAYLOADS = ROOT / "tests" / "fixtures" / "payloads"


def compiled_entry(python: str, tmp: Path, checkout: Path = ROOT) -> Path:
    """`hooks/entry.py` compiled by `python` as install.sh compiles it, in a directory
    whose `../src` is the checkout's (this one's unless told)."""
    (tmp / "hooks").mkdir()
    (tmp / "src").symlink_to(checkout.resolve() / "src")
    target = tmp / "hooks" / "entry.pyc"
    subprocess.run(
        [
            python,
            "-I",
            "-c",
            "import py_compile, sys; py_compile.compile(*sys.argv[1:3], doraise=True)",
            str(checkout.resolve() / "hooks" / "entry.py"),
            str(target),
        ],
        check=True,
    )
    return target


def wall(cmd: list[str], stdin_path: Path | None, env: dict[str, str]) -> float:
    with open(stdin_path or os.devnull, "rb") as stdin:
        start = time.perf_counter()
        subprocess.run(cmd, stdin=stdin, stdout=subprocess.DEVNULL, env=env, check=False)
        return time.perf_counter() - start


def payload_file(tmp: Path, name: str, project: Path, target: str | None = None) -> Path:
    """A reference payload with its paths moved into the benchmark's project
    (and, with `target`, its Write path, Bash redirection, or the file a finished
    Bash command reports it changed, pointed there)."""
    doc = json.loads((PAYLOADS / f"{name}.json").read_text())["stdin"]
    if name.startswith("codex/") and target is not None:
        doc["tool_input"]["command"] = (
            f"*** Begin Patch\n*** Update File: {target}\n@@\n-alpha\n+beta\n*** End Patch\n"
            if doc["tool_name"] == "apply_patch"
            else f"echo hi > {target}"
        )
        if doc["tool_name"] == "apply_patch" and "tool_response" in doc:
            doc["tool_response"] = (
                f"Exit code: 0\nOutput:\nSuccess. Updated the following files:\nM {target}\n"
            )
    elif name.startswith("opencode/") and target is not None:
        if "filePath" in doc["tool_input"]:
            doc["tool_input"]["filePath"] = f"{project}/{target}"
        else:
            doc["tool_input"]["command"] = f"echo hi > {target}"
    elif name.startswith("qwen/") and target is not None:
        if "file_path" in doc["tool_input"]:
            doc["tool_input"]["file_path"] = f"{project}/{target}"
        else:
            doc["tool_input"]["command"] = f"echo hi > {target}"
    elif name.startswith("gemini/") and target is not None:
        if "file_path" in doc["tool_input"]:
            doc["tool_input"]["file_path"] = target  # relative, as Gemini's model may write it
        else:
            doc["tool_input"]["command"] = f"echo hi > {target}"
    elif target is not None and "file_path" in doc["tool_input"]:
        doc["tool_input"]["file_path"] = f"{project}/{target}"
    elif target is not None:
        doc["tool_input"]["command"] = f"echo hi > {target}"
        if "tool_response" in doc:
            doc["tool_response"]["bashEditDiff"]["files"][0]["filePath"] = f"{project}/{target}"
    text = json.dumps(doc).replace("/home/dev/myproject", str(project))
    stem = name.replace("/", "_")
    path = tmp / f"{stem}{'-' + target.replace('/', '_') if target else ''}.json"
    path.write_text(text)
    return path


def compare(
    python: str,
    cases: dict[str, tuple[list[str], Path]],
    env: dict[str, str],
    runs: int,
    prepare: dict[str, Callable[[int], object]] | None = None,
    envs: dict[str, dict[str, str]] | None = None,
) -> dict[str, float]:
    """Median ratio per case; `prepare[name](n)` runs (untimed) before run n of a case;
    `envs[name]`, when given, is that case's environment instead of `env`."""
    baseline = [python, "-I", "-S", "-c", "pass"]
    ratios: dict[str, list[float]] = {name: [] for name in cases}
    where = {name: (envs or {}).get(name, env) for name in cases}
    for name, (cmd, stdin) in cases.items():  # warm caches (.pyc, page cache)
        wall(cmd, stdin, where[name])
    for n in range(runs):
        for name, (cmd, stdin) in cases.items():
            if prepare and name in prepare:
                prepare[name](n)
            base = wall(baseline, stdin, where[name])
            ratios[name].append(wall(cmd, stdin, where[name]) / base)
    return {name: statistics.median(values) for name, values in ratios.items()}


def new_project(base: Path) -> tuple[Path, dict[str, str]]:
    """A project under `base` (a `.git` directory and `a.txt`) and the environment of the
    agent `bench__cc_me` working in it, its HOME beside it."""
    project = base / "project"
    (project / ".git").mkdir(parents=True)
    (project / "a.txt").write_text("alpha\nline two\n")
    env = {
        "HOME": str(base / "home"),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "AGENT_NAME": "bench__cc_me",
        "CLAUDE_PROJECT_DIR": str(project),
    }
    return project, env


def start_session(hook: list[str], env: dict[str, str], base: Path, project: Path) -> None:
    """The agent's SessionStart, as Claude Code starts a conversation."""
    subprocess.run(
        [*hook, "SessionStart"],
        stdin=payload_file(base, "SessionStart_startup", project).open("rb"),
        stdout=subprocess.DEVNULL,
        env=env,
        check=True,
    )


def against_cases(
    python: str,
    tmp: Path,
    checkout: Path,
    names: dict[str, tuple[str, str, str | None]],
    targets: dict[str, str] | None = None,
) -> tuple[
    dict[str, tuple[list[str], Path]], dict[str, dict[str, str]], dict[str, Callable[[int], object]]
]:
    """The cases `names` (case -> the entry's arguments, payload, the file it leases anew
    each run; `targets`: a case's target file, as this checkout's case has it) run by another
    checkout's hooks, in a project and HOME of their own (an earlier release's state and
    ledger never meet this one's); keyed `<case> @ <checkout>`."""
    base = tmp / "against"
    base.mkdir()
    hook = [python, "-IS", str(compiled_entry(python, base, checkout))]
    project, env = new_project(base)
    start_session(hook, env, base, project)
    for rel in ("c.txt", "d.txt"):
        (project / rel).write_text("alpha\nline two\n")
    label = checkout.name
    cases: dict[str, tuple[list[str], Path]] = {}
    prepare: dict[str, Callable[[int], object]] = {}
    for name, (event, fixture, lease) in names.items():
        key = f"{name} @ {label}"
        target = (targets or {}).get(name)
        cases[key] = ([*hook, *event.split()], payload_file(base, fixture, project, target))
        if lease is not None:
            prepare[key] = fresh_lease(project / ".git" / "agent-hooks", lease)
        elif name == "PostToolUse Edit":
            prepare[key] = lambda n: (project / "a.txt").write_text(f"alpha {n}\nline two\n")
        elif name == HELD_EDIT:
            cases[key] = ([*hook, event], payload_file(base, fixture, project, HELD_FILE))
            prepare[key] = held_edit(hook, env, base, project, HELD_FILE, HELD_SIZE)
        elif name.endswith(" edit"):  # a new fingerprint to write, as after a real edit
            prepare[key] = lambda n: (project / "c.txt").write_text(f"alpha {n}\n")
    return cases, dict.fromkeys(cases, env), prepare


# An edit of a held file of 64 KiB: its PostToolUse keeps the new content (a kept
# version: its hash and its copy are what that costs).
HELD_EDIT = "PostToolUse Edit (64 KiB held)"
HELD_FILE = "held64.py"
HELD_SIZE = 64 << 10


def held_edit(
    hook: list[str], env: dict[str, str], tmp: Path, project: Path, rel: str, size: int
) -> Callable[[int], object]:
    """Before run n of an edit's PostToolUse: the edit as the client makes it,
    untimed — its PreToolUse (which leases the file: the writer holds it) and the
    file's new content (`size` bytes, new each run)."""
    pre = payload_file(tmp, "PreToolUse_Write", project, rel)

    def prepare(n: int) -> None:
        with pre.open("rb") as stdin:
            subprocess.run(
                [*hook, "PreToolUse"], stdin=stdin, stdout=subprocess.DEVNULL, env=env, check=False
            )
        (project / rel).write_bytes(n.to_bytes(4, "little") * (size // 4))

    return prepare


def seed_reservations(env: dict[str, str], project: Path, agents: range, each: int) -> None:
    """Agents bench__cc_<a> each reserve `each` directories spread over pkg0..pkg9."""
    sys.path.insert(0, str(ROOT / "src"))
    from agent_hooks import identity
    from agent_hooks.ledger import reservation_store
    from agent_hooks.ledger.repo import Repo
    from agent_hooks.reservations import pattern
    from agent_hooks.writers import Writer

    state_dir = identity.state_dir(env)
    now = time.time()
    for a in agents:
        name = f"bench__cc_{a}"
        texts = [f"pkg{a % 10}/mod{a}_{r}/**" for r in range(each)]
        reservation_store.reserve(
            Repo(str(project), state_dir),
            Writer(name, None),
            [(t, pattern.compile(t)) for t in texts],
            now,
            reason=f"bench-{a}",
            ttl=3600,
            shared=False,
            keep=True,
        )


def seed_leases(env: dict[str, str], project: Path, agents: range, each: int) -> None:
    """Agents bench__cc_<a> each lease `each` files spread over pkg0..pkg9 (held by
    this live process, so every lease counts)."""
    sys.path.insert(0, str(ROOT / "src"))
    from agent_hooks import identity, writers
    from agent_hooks.leases import lease_store
    from agent_hooks.ledger.repo import Repo

    repo = Repo(str(project), identity.state_dir(env), {"AGENT_HOOKS_LEASE_MINUTES": "600"})
    for a in agents:
        rels = [f"pkg{(a + r) % 10}/lease{a}_{r}.py" for r in range(each)]
        lease_store.claim_many(
            repo,
            rels,
            writers.Writer(f"bench__cc_{a}", f"conv-{a}"),
            time.time(),
            holder_pid=os.getpid(),
        )


def fresh_lease(ledger_dir: Path, rel: str) -> Callable[[int], object]:
    """Before each run: no lease on `rel`, so the hook claims one (a write)."""

    def prepare(n: int) -> None:
        try:
            (ledger_dir / "leases" / rel).unlink()
        except FileNotFoundError:
            pass

    return prepare


def hold_files(hook: list[str], env: dict[str, str], tmp: Path, project: Path, count: int) -> Path:
    """The benchmark's agent writes `count` files as the client does (PreToolUse,
    the write, PostToolUse): it leases them, and its state keeps their
    fingerprints; returns the PostToolUse payload of the first, for reuse."""
    post = payload_file(tmp, "PostToolUse_Write", project)
    for n in range(count):
        target = project / f"held{n}.py"
        for event, name in (
            ("PreToolUse", "PreToolUse_Write"),
            ("PostToolUse", "PostToolUse_Write"),
        ):
            if event == "PostToolUse":
                target.write_text(f"v{n}\n")
            doc = json.loads(payload_file(tmp, name, project).read_text())
            doc["tool_input"]["file_path"] = str(target)
            path = tmp / f"{name}-held{n}.json"
            path.write_text(json.dumps(doc))
            subprocess.run(
                [*hook, event],
                stdin=path.open("rb"),
                stdout=subprocess.DEVNULL,
                env=env,
                check=True,
            )
            if n == 0 and event == "PostToolUse":
                post = path
    return post


def fill_trail(env: dict[str, str], project: Path, each: int) -> None:
    """The agent's trail lists full (`each` files created and modified, and read), each
    with a fingerprint of a real file's size (a 61-bit checksum); the first hook keeps
    the state's window of them and the rest beside it, as after a long session. The
    fingerprints are written as lists `[mtime_ns, size, checksum]`, as releases before
    the string form stored them: the first hook that writes the state rewrites them in
    its own form (`--checkout` of an earlier commit measures that commit's form)."""
    state = Path(env["HOME"]) / ".claude" / f"state-{env['AGENT_NAME']}.json"
    doc = json.loads(state.read_text())
    for field in ("files_created", "files_modified", "files_read"):
        paths = [f"{project}/gen/{field}/{n}.py" for n in range(each)]
        doc[field] = doc[field] + paths
        for n, path in enumerate(paths):
            checksum = (0x1D2C3B4A59687766 * (n + 1)) % ((1 << 61) - 1)
            doc["fingerprints"][path] = [1764000000123456789 + n * 1_000_003, 1234 + n, checksum]
    state.write_text(json.dumps(doc))


def shared_project(tmp: Path) -> tuple[Path, dict[str, str], Path]:
    """A repository whose ledger is shared with another machine through a bare
    remote: (its work tree, the hook environment, its ledger directory)."""
    sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]
    from ledger_machines import World

    world = World(tmp / "shared", None)
    me, other = world.machine("bench-me"), world.machine("bench-other")
    now = time.time()
    for machine in (me, other):
        assert not machine.switch_on(now).conflicts
    for n in range(50):
        other.claim(f"pkg{n % 9}/lease{n}.py", "bench-other", now)
    for machine in (me, other, me):
        assert machine.sync(now).ok
    (me.repo / "a.txt").write_text("alpha\nline two\n")
    env = {
        **me.environ,
        "AGENT_NAME": "bench__cc_me",
        "CLAUDE_PROJECT_DIR": str(me.repo),
    }
    return me.repo, env, me.ledger


def report(title: str, few: dict[str, float], many: dict[str, float], small: str, big: str) -> None:
    print(title)
    for name, ratio in many.items():
        print(
            f"  {name:<26} {small}: {few[name]:4.2f}x   {big}: {ratio:4.2f}x"
            f"   = {ratio / few[name]:4.2f}x the smaller case"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--python", default=os.path.realpath(sys.executable))
    parser.add_argument(
        "--scale", action="store_true", help="also the 100 agents x 10 reservations case"
    )
    parser.add_argument("--source", action="store_true", help="run hooks/entry.py, not it compiled")
    parser.add_argument(
        "--remote", action="store_true", help="also the ledger shared with another machine"
    )
    parser.add_argument(
        "--against",
        type=Path,
        metavar="CHECKOUT",
        help="also Claude Code's (and some Codex and Gemini CLI) cases run by another "
        "checkout's hooks, side by side",
    )
    args = parser.parse_args()
    python = args.python
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        project, env = new_project(tmp)
        edited = project / "a.txt"
        hook = [python, "-IS", str(ENTRY if args.source else compiled_entry(python, tmp))]
        start_session(hook, env, tmp, project)
        ledger_dir = project / ".git" / "agent-hooks"
        cases = {
            "PreToolUse Write (lease)": (
                [*hook, "PreToolUse"],
                payload_file(tmp, "PreToolUse_Write", project),
            ),
            "PreToolUse Write (renew)": (
                [*hook, "PreToolUse"],
                payload_file(tmp, "PreToolUse_Write", project),
            ),
            "PreToolUse Bash": (
                [*hook, "PreToolUse"],
                payload_file(tmp, "PreToolUse_Bash", project),
            ),
            "PostToolUse Edit": (
                [*hook, "PostToolUse"],
                payload_file(tmp, "PostToolUse_Edit", project),
            ),
            HELD_EDIT: (
                [*hook, "PostToolUse"],
                payload_file(tmp, "PostToolUse_Edit", project, HELD_FILE),
            ),
            "PostToolUse Read": (
                [*hook, "PostToolUse"],
                payload_file(tmp, "PostToolUse_Read", project),
            ),
            "PostToolUse Read (256 KiB)": (
                [*hook, "PostToolUse"],
                payload_file(tmp, "PostToolUse_Read", project, "big.log"),
            ),
            "PostToolUse Bash (lease)": (
                [*hook, "PostToolUse"],
                payload_file(tmp, "PostToolUse_Bash", project),
            ),
            "Stop": ([*hook, "Stop"], payload_file(tmp, "Stop", project)),
        }
        print(
            f"python: {python} ({sys.version.split()[0]}); {args.runs} paired runs; "
            f"entry: {hook[2].rpartition('/')[2]}; ratio = hook / `python -I -S -c pass`"
        )
        # A real edit changes the file each time, so PostToolUse has a new fingerprint to write;
        # "(lease)" cases start without a lease, so the hook writes one.
        prepare: dict[str, Callable[[int], object]] = {
            "PostToolUse Edit": lambda n: edited.write_text(f"alpha {n}\nline two\n"),
            HELD_EDIT: held_edit(hook, env, tmp, project, HELD_FILE, HELD_SIZE),
            # a file read whole is fingerprinted whole (up to 2 MiB): a new one each run
            "PostToolUse Read (256 KiB)": lambda n: (project / "big.log").write_bytes(
                n.to_bytes(4, "little") * 65_536
            ),
            "PreToolUse Write (lease)": fresh_lease(ledger_dir, "a.txt"),
            "PostToolUse Bash (lease)": fresh_lease(ledger_dir, "b.txt"),
        }
        for client in ("codex", "gemini"):
            pre, post = {
                "codex": ("PreToolUse", "PostToolUse"),
                "gemini": ("BeforeTool", "AfterTool"),
            }[client]
            edit = "apply_patch_patch_update" if client == "codex" else "write_file"
            shell = "Bash_shell_write" if client == "codex" else "run_shell_command"
            label = "Codex" if client == "codex" else "Gemini"
            for event, kind, fixture, target, lease in (
                (pre, "edit (lease)", f"{client}/{pre}_{edit}", "c.txt", "c.txt"),
                (pre, "shell", f"{client}/{pre}_{shell}", "d.txt", None),
                (post, "edit", f"{client}/{post}_{edit}", "c.txt", None),
                (post, "shell (lease)", f"{client}/{post}_{shell}", "d.txt", "d.txt"),
            ):
                name = f"{label} {event} {kind}"
                cases[name] = ([*hook, client, event], payload_file(tmp, fixture, project, target))
                if lease is not None:
                    prepare[name] = fresh_lease(ledger_dir, lease)
                elif kind == "edit":  # a new fingerprint to write, as after a real edit
                    prepare[name] = lambda n: (project / "c.txt").write_text(f"alpha {n}\n")
        # opencode (its plugin spawns the entry: what the plugin adds is bench/opencode_plugin.py's)
        # and Qwen Code: an edit and a shell write, before and after they ran
        for client, pre, post, edit, shell, label in (
            ("opencode", "tool.execute.before", "tool.execute.after", "edit", "bash", "opencode"),
            ("qwen", "PreToolUse", "PostToolUse", "write_file", "run_shell_command", "Qwen"),
        ):
            for event, kind, fixture, target, lease in (
                (pre, "edit (lease)", f"{client}/{pre}_{edit}", "e.txt", "e.txt"),
                (pre, "shell", f"{client}/{pre}_{shell}", "f.txt", None),
                (post, "edit", f"{client}/{post}_{edit}", "e.txt", None),
                (post, "shell (lease)", f"{client}/{post}_{shell}", "f.txt", "f.txt"),
            ):
                name = f"{label} {event} {kind}"
                cases[name] = ([*hook, client, event], payload_file(tmp, fixture, project, target))
                if lease is not None:
                    prepare[name] = fresh_lease(ledger_dir, lease)
                elif kind == "edit":  # a new fingerprint to write, as after a real edit
                    prepare[name] = lambda n: (project / "e.txt").write_text(f"alpha {n}\n")
        for rel in ("c.txt", "d.txt", "e.txt", "f.txt"):
            (project / rel).write_text("alpha\nline two\n")
        envs: dict[str, dict[str, str]] = {}
        if args.against is not None:  # each case beside the other checkout's, run after run
            other, envs, other_prepare = against_cases(python, tmp, args.against, {
                "PreToolUse Write (lease)": ("PreToolUse", "PreToolUse_Write", "a.txt"),
                "PreToolUse Write (renew)": ("PreToolUse", "PreToolUse_Write", None),
                "PreToolUse Bash": ("PreToolUse", "PreToolUse_Bash", None),
                "PostToolUse Edit": ("PostToolUse", "PostToolUse_Edit", None),
                HELD_EDIT: ("PostToolUse", "PostToolUse_Edit", None),
                "PostToolUse Read": ("PostToolUse", "PostToolUse_Read", None),
                "PostToolUse Bash (lease)": ("PostToolUse", "PostToolUse_Bash", "b.txt"),
                "Codex PreToolUse edit (lease)": (
                    "codex PreToolUse", "codex/PreToolUse_apply_patch_patch_update", "c.txt"),
                "Codex PostToolUse shell (lease)": (
                    "codex PostToolUse", "codex/PostToolUse_Bash_shell_write", "d.txt"),
                "Gemini BeforeTool edit (lease)": (
                    "gemini BeforeTool", "gemini/BeforeTool_write_file", "c.txt"),
                "Gemini AfterTool shell (lease)": (
                    "gemini AfterTool", "gemini/AfterTool_run_shell_command", "d.txt"),
            }, targets={
                "Codex PreToolUse edit (lease)": "c.txt",
                "Codex PostToolUse shell (lease)": "d.txt",
                "Gemini BeforeTool edit (lease)": "c.txt",
                "Gemini AfterTool shell (lease)": "d.txt",
            })  # fmt: skip
            mixed = {}
            for name, case in cases.items():
                mixed[name] = case
                for key in other:
                    if key.startswith(f"{name} @ "):
                        mixed[key] = other[key]
            cases = mixed
            prepare.update(other_prepare)
        one = compare(python, cases, env, args.runs, prepare, envs)
        for name, ratio in one.items():
            hot = {"PreToolUse", "PostToolUse", "BeforeTool", "AfterTool"}
            hot |= {"tool.execute.before", "tool.execute.after"}
            budget = " (budget 1.5x)" if hot & set(name.split()[:2]) else ""
            print(f"  {name:<32} {ratio:5.2f}x{budget}")
        # The net under the gate: the writer holds files (their fingerprints in its state
        # and on its leases), and its trail is long (1,000 files a list: the state keeps
        # a window of each, the rest beside it, as after a long session).
        held = hold_files(hook, env, tmp, project, 10)
        fill_trail(env, project, 1000)
        net_cases = {
            "PostToolUse Edit (held)": ([*hook, "PostToolUse"], held),
            "PostToolUse Read (10 held)": cases["PostToolUse Read"],
            "PostToolUse Bash (10 held)": cases["PostToolUse Bash (lease)"],
        }
        net_prepare: dict[str, Callable[[int], object]] = {
            "PostToolUse Edit (held)": lambda n: (project / "held0.py").write_text(f"v{n}\n"),
            "PostToolUse Bash (10 held)": fresh_lease(ledger_dir, "b.txt"),
        }
        net = compare(python, net_cases, env, args.runs, net_prepare)
        print("  with 10 held files and a long trail (1,000 files a list; budget 1.5x):")
        for name, ratio in net.items():
            print(f"  {name:<32} {ratio:5.2f}x")
        if args.remote:
            bench_remote(python, hook, tmp, args.runs, one)
        if args.scale:
            bench_scale(python, hook, tmp / "scale", args.runs)
    return 0


def bench_scale(python: str, hook: list[str], base: Path, runs: int) -> None:
    """--scale: a fresh agent writing into pkg3/free/ of a project of its own, among
    others' reservations, then also their leases (the issue's condition: fingerprints on,
    among 100 writers x 50 leases); then all of it at once, the agent holding 10 files
    with a long trail."""
    base.mkdir()
    project, env = new_project(base)
    start_session(hook, env, base, project)
    ledger_dir = project / ".git" / "agent-hooks"
    cases = {
        "PreToolUse Write (lease)": (
            [*hook, "PreToolUse"],
            payload_file(base, "PreToolUse_Write", project, "pkg3/free/x.py"),
        ),
        "PreToolUse Bash": (
            [*hook, "PreToolUse"],
            payload_file(base, "PreToolUse_Bash", project, "pkg3/free/y.txt"),
        ),
        "PostToolUse Bash (lease)": (
            [*hook, "PostToolUse"],
            payload_file(base, "PostToolUse_Bash", project, "pkg3/free/y.txt"),
        ),
    }
    prepare: dict[str, Callable[[int], object]] = {
        "PreToolUse Write (lease)": fresh_lease(ledger_dir, "pkg3%2Ffree%2Fx.py"),
        "PostToolUse Bash (lease)": fresh_lease(ledger_dir, "pkg3%2Ffree%2Fy.txt"),
    }
    seed_reservations(env, project, range(1), 10)
    few = compare(python, cases, env, runs, prepare)
    seed_reservations(env, project, range(1, 100), 10)
    many = compare(python, cases, env, runs, prepare)
    report(
        "writing into pkg3/free/, among held reservations "
        "(budget: 1.5x each, and 100 agents within 1.2x of 1 agent):",
        few,
        many,
        "1 agent x 10",
        "100 agents x 10",
    )
    seed_leases(env, project, range(1000, 1001), 50)
    few = compare(python, cases, env, runs, prepare)
    seed_leases(env, project, range(1001, 1100), 50)
    many = compare(python, cases, env, runs, prepare)
    report(
        "... and among other writers' leases (budget: 1.5x each, 100 agents x 50 leases "
        "within 1.2x of 1 agent x 50):",
        few,
        many,
        "1 x 50",
        "100 x 50",
    )
    hold_files(hook, env, base, project, 10)
    fill_trail(env, project, 1000)
    stacked = compare(python, cases, env, runs, prepare)
    print("... and all at once, the agent holding 10 files with a long trail (budget 1.5x):")
    for name, ratio in stacked.items():
        print(f"  {name:<26} {ratio:4.2f}x")
    # A held file found changed by someone else: the holder's check reads every writer's
    # recent shell commands (leases/command_windows) for whose ran then (docs/adr/0027).
    found = "PostToolUse Read (held changed)"
    changed = {found: ([*hook, "PostToolUse"], payload_file(base, "PostToolUse_Read", project))}
    touch = {found: lambda n: (project / "held0.py").write_text(f"changed {n}\n")}
    before = compare(python, changed, env, runs, touch)
    seed_commands(project, range(100), 200)
    after = compare(python, changed, env, runs, touch)
    report(
        "... and a held file found changed, no writer's commands kept, then 100 writers' "
        "(200 commands each, the last 10 min; budget 1.5x):",
        before,
        after,
        "none kept",
        "100 x 200",
    )


def seed_commands(project: Path, agents: range, each: int) -> None:
    """Agents bench__cc_<a> each ran `each` shell commands over the last 10 minutes, none
    of them at this moment: every writer's file is read, none names the change."""
    sys.path.insert(0, str(ROOT / "src"))
    from agent_hooks import writers
    from agent_hooks.leases import command_log

    ledger = str(project / ".git" / "agent-hooks")
    now = time.time()
    for a in agents:
        me = writers.Writer(f"bench__cc_{a}", f"conv-{a}", client="claude")
        for n in range(each):
            start = now - 600 + n * 590 / each
            command_log.started(ledger, me, ".", f"toolu_{a}_{n}", start)
            command_log.ended(ledger, me, ".", f"toolu_{a}_{n}", (start, start + 1), start + 1)


def bench_remote(
    python: str, hook: list[str], tmp: Path, runs: int, local: dict[str, float]
) -> None:
    """The same hooks with the ledger shared through a git remote (see the module)."""
    project, env, ledger_dir = shared_project(tmp)
    start_session(hook, env, tmp, project)
    edited = project / "a.txt"
    names = {
        "PreToolUse Write (lease)": ("PreToolUse", "PreToolUse_Write", None),
        "PreToolUse Write (renew)": ("PreToolUse", "PreToolUse_Write", None),
        "PreToolUse Bash": ("PreToolUse", "PreToolUse_Bash", None),
        "PostToolUse Edit": ("PostToolUse", "PostToolUse_Edit", None),
        "PostToolUse Read": ("PostToolUse", "PostToolUse_Read", None),
        "PostToolUse Bash (lease)": ("PostToolUse", "PostToolUse_Bash", None),
        "Stop": ("Stop", "Stop", None),
        "PreToolUse Write, leased elsewhere": ("PreToolUse", "PreToolUse_Write", "pkg0/lease0.py"),
    }
    remote_tmp = tmp / "remote-payloads"
    remote_tmp.mkdir()
    cases = {
        name: ([*hook, event], payload_file(remote_tmp, fixture, project, target))
        for name, (event, fixture, target) in names.items()
    }
    prepare: dict[str, Callable[[int], object]] = {
        "PostToolUse Edit": lambda n: edited.write_text(f"alpha {n}\nline two\n"),
        "PreToolUse Write (lease)": fresh_lease(ledger_dir, "a.txt"),
        "PostToolUse Bash (lease)": fresh_lease(ledger_dir, "b.txt"),
    }
    shared = compare(python, cases, env, runs, prepare)
    from ledger_machines import wait_for_syncs

    wait_for_syncs(ledger_dir)  # one a hook started may still run: let it end first
    print("the ledger shared with another machine through a git remote (budget 1.5x):")
    for name, ratio in shared.items():
        before = f"   not shared: {local[name]:4.2f}x" if name in local else ""
        print(f"  {name:<36} {ratio:5.2f}x{before}")


if __name__ == "__main__":
    raise SystemExit(main())
