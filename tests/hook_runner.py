"""Running the real hook entry script as Claude Code runs it, for tests.

Invariants:

* No test touches the real ``~/.claude``: every hook run gets a HOME under the
  test's temp dir and an environment built from scratch (only PATH is kept, and
  mutmut's ``MUTANT_UNDER_TEST``, so that a mutant is active in the hook too:
  docs/mutation-testing.md).
* Hooks run exactly as their client runs them: ``[sys.executable, "-IS", ENTRY, event]``
  for Claude Code, ``[…, ENTRY, client, event]`` for Codex and Gemini CLI, as a new
  process, the payload on stdin, exit code and stdout checked by the caller. The
  environment is the client's: Claude Code's sets ``CLAUDE_PID`` and
  ``CLAUDE_PROJECT_DIR``, Gemini CLI's ``CLAUDE_PROJECT_DIR`` and ``GEMINI_*``, Qwen
  Code's ``QWEN_PROJECT_DIR``, ``CLAUDE_PROJECT_DIR`` and ``GEMINI_PROJECT_DIR``,
  opencode's plugin passes ``OPENCODE_PID``, Codex's none of them (its hooks find the
  project from the payload's ``cwd``). For Codex, Gemini and Qwen Code the holder
  process is the hook's parent, for opencode ``OPENCODE_PID``: this test process.
* Payloads come from ``tests/fixtures/payloads/<name>.json`` (captured from the real
  client; ``codex/``, ``gemini/``, ``opencode/`` and ``qwen/`` hold those clients') with their
  ``/home/dev/myproject`` and ``/home/dev`` paths rewritten into the test's project and
  HOME.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
ENTRY = str(ROOT / "hooks" / "entry.py")
PAYLOADS = ROOT / "tests" / "fixtures" / "payloads"
FIXTURE_PROJECT = "/home/dev/myproject"
FIXTURE_HOME = "/home/dev"
AGENT = "proj__cc_1"


def mutant_under_test() -> dict[str, str]:
    """`MUTANT_UNDER_TEST` for a child process's environment when `mutmut run` set it
    to a mutant's name (not its stats or self-check phase), else nothing: a mutant is
    then active in the hooks and git hooks the tests start, too."""
    mutant = os.environ.get("MUTANT_UNDER_TEST", "")
    return {"MUTANT_UNDER_TEST": mutant} if "__mutmut_" in mutant else {}


class HookResult(NamedTuple):
    code: int
    out: Any  # stdout parsed as JSON, or None when the hook printed nothing
    err: str
    logged: tuple[str, ...] = ()  # the lines this run added to the hook log


def rewrite(value: Any, project: str, home: str) -> Any:
    """`value` with the fixtures' captured paths moved into `project` and `home`."""
    if isinstance(value, str):
        return value.replace(FIXTURE_PROJECT, project).replace(FIXTURE_HOME, home)
    if isinstance(value, list):
        return [rewrite(v, project, home) for v in value]
    if isinstance(value, dict):
        return {k: rewrite(v, project, home) for k, v in value.items()}
    return value


def load_payload(name: str, project: str, home: str, **stdin: Any) -> dict[str, Any]:
    """The stdin document of fixture `name`, rewritten, with top-level `stdin` overrides."""
    captured = json.loads((PAYLOADS / f"{name}.json").read_text())
    payload: dict[str, Any] = rewrite(captured["stdin"], project, home)
    payload.update(stdin)
    return payload


def write_state(state_dir: Path, name: str | None, doc: Any, mtime: float | None = None) -> Path:
    """Write an agent's state file as another process would have left it."""
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / (f"state-{name}.json" if name is not None else "agent-state.json")
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    path.chmod(0o600)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


class HookRunner:
    """Runs hooks/entry.py for one test's HOME and project."""

    def __init__(self, home: Path, project: Path) -> None:
        self.home = home
        self.project = project
        self.state_dir = home / ".claude"
        self.log_file = self.state_dir / "agent-hooks.log"

    def payload(self, name: str, **stdin: Any) -> dict[str, Any]:
        return load_payload(name, str(self.project), str(self.home), **stdin)

    def env(
        self,
        agent: Any = AGENT,
        extra: Mapping[str, str] | None = None,
        client: str | None = None,
    ) -> dict[str, str]:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home)}
        if client is None:
            env["CLAUDE_PROJECT_DIR"] = str(self.project)
            env["CLAUDE_PID"] = str(os.getpid())  # alive for as long as the test runs
            env["CLAUDECODE"] = "1"
        elif client == "gemini":
            env["CLAUDE_PROJECT_DIR"] = env["GEMINI_PROJECT_DIR"] = str(self.project)
            env["GEMINI_CWD"] = str(self.project)
        elif client == "qwen":  # Qwen Code sets all three (measured, 0.24.4)
            for name in ("QWEN_PROJECT_DIR", "CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR"):
                env[name] = str(self.project)
            env["QWEN_CODE_AGENT_ID"] = ""
        elif client == "opencode":  # what the plugin passes on: opencode's own environment
            env["OPENCODE"] = "1"
            env["OPENCODE_PID"] = str(os.getpid())  # the holder: alive as long as the test
        if agent is not None:
            env["AGENT_NAME"] = agent
        env.update(mutant_under_test())
        env.update(extra or {})
        return {k: v for k, v in env.items() if v is not None}

    def __call__(
        self,
        event: str,
        payload: Any = None,
        *,
        agent: Any = AGENT,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        timeout: float = 60,
        client: str | None = None,
    ) -> HookResult:
        """Run `event` with `payload` (a fixture name, a dict, bytes or str) on stdin,
        as `client` (None: Claude Code, whose entry argv names no client) runs it."""
        import subprocess

        if payload is None:
            data = b""
        elif isinstance(payload, bytes):
            data = payload
        elif isinstance(payload, str) and (PAYLOADS / f"{payload}.json").is_file():
            data = json.dumps(self.payload(payload)).encode()
        elif isinstance(payload, str):
            data = payload.encode()
        else:
            data = json.dumps(payload).encode()
        before = self.log_file.stat().st_size if self.log_file.is_file() else 0
        proc = subprocess.run(
            [sys.executable, "-IS", ENTRY, *([client] if client else []), event],
            input=data,
            capture_output=True,
            env=self.env(agent, env, client),
            cwd=str(cwd or self.project),
            timeout=timeout,
        )
        text = proc.stdout.decode()
        try:
            out = json.loads(text) if text.strip() else None
        except ValueError:
            raise AssertionError(
                f"{event} printed something that is not JSON: {text[:300]!r}"
            ) from None
        return HookResult(proc.returncode, out, proc.stderr.decode(), self._logged_since(before))

    def _logged_since(self, offset: int) -> tuple[str, ...]:
        """The log lines written past `offset` (all of them if the log was rotated)."""
        try:
            with self.log_file.open("rb") as log:
                if log.seek(0, 2) < offset:
                    offset = 0
                log.seek(offset)
                return tuple(log.read().decode(errors="replace").splitlines())
        except OSError:  # no log (or no state directory: a file stands there)
            return ()

    def state_path(self, agent: str | None = AGENT) -> Path:
        return self.state_dir / (f"state-{agent}.json" if agent is not None else "agent-state.json")

    def state(self, agent: str | None = AGENT) -> dict[str, Any]:
        doc: dict[str, Any] = json.loads(self.state_path(agent).read_text())
        return doc

    def log_lines(self) -> list[str]:
        return self.log_file.read_text().splitlines() if self.log_file.exists() else []

    def leases(self) -> dict[str, list[dict[str, Any]]]:
        """The project's live lease documents, by path: each path's leases, as recorded."""
        found = {}
        for path in sorted((self.project / ".git" / "agent-hooks" / "leases").glob("*")):
            doc = json.loads(path.read_text())
            if doc["leases"]:
                found[doc["path"]] = doc["leases"]
        return found


# What a hook logs when it failed and let the call through anyway (docs/adr/0004): an
# exception (`...; allowed (fail open)`), a lock given up on, a lease it could not write.
FAILURE_MARKS = ("fail open", "not leased", "lease not recorded")


def failures(result: HookResult) -> list[str]:
    """The failures a hook run reported: log lines it added that say it failed
    open, and the entry script's own complaint on stderr when it could not start."""
    found = [line for line in result.logged if any(mark in line for mark in FAILURE_MARKS)]
    if "could not run" in result.err:
        found.append(result.err.strip())
    return found


def context_of(result: HookResult, event: str = "SessionStart") -> str:
    """The additionalContext a hook returned (asserting the protocol's shape)."""
    assert result.code == 0, result.err
    assert isinstance(result.out, dict), result
    specific = result.out["hookSpecificOutput"]
    assert specific["hookEventName"] == event
    text: str = specific["additionalContext"]
    return text
