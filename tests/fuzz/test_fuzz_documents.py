"""Fuzzed ledgers and state documents (issue 11): valid entries mixed with malformed
ones (document_strategies), then the real hooks and CLI run against them.

Properties:

* never denies without a live holder, and every valid entry is still enforced: a
  PreToolUse Write / Edit / MultiEdit / NotebookEdit (or Bash `echo x > path`) by
  this agent — its main conversation, one of its subagents, or an unnamed agent —
  is denied if and only if a valid entry blocks it: another owner's live
  exclusive reservation covering the path (pathspec decides; for Bash, covering
  the path or something below it) whose holder counts (ADR-0014), or a counting
  lease on the file of a writer that blocks this one, or strict mode without a
  reservation of one's own. Malformed entries beside them change nothing.
  Ambiguous entries may block or not.
* never loses a valid entry: after CLI commands (`reserve` of another pattern,
  `release --all` of another agent, `reservations --json`) and hooks that rewrite
  the ledger or state (PostToolUse recording a trail, SessionEnd of a different
  agent, SessionStart, SubagentStop, a PreToolUse that takes a lease), every
  valid reservation that was there still is, unless it was legitimately dropped
  (expired; its holder's process gone and no --keep: then named in `dropped`;
  released by its own agent), every malformed one is kept in `rejected`, a ledger
  that is no JSON object is set aside as `.corrupt-*`, counting leases stay, and
  the agents' valid trail entries and other projects' reservation mirrors stay.
  The CLI exits 0 or 1 with a one-line error, never a traceback.
"""

from __future__ import annotations

import functools
import json
import os
import shlex
import time
from typing import Any

import document_strategies as ds
import fuzz_world as fw
import pytest
from click.testing import CliRunner
from hypothesis import event, given
from hypothesis import strategies as st

from agent_hooks import repository
from agent_hooks.cli import main as cli_main
from agent_hooks.cli._common import Env
from hook_runner import load_payload

WRITERS_OF_ME = {"main": fw.ME, "sub": f"{fw.ME}#{ds.A_ID}", "unnamed": f"~{fw.SESSION}"}
EDIT_TOOLS = ["Write", "Edit", "MultiEdit", "NotebookEdit", "Bash"]


@functools.lru_cache(maxsize=4096)
def covers(pattern: str, rel: str) -> bool:
    return fw.glob_matches(pattern, rel)


def _sample_name(glob: str) -> str:
    """A file name the glob segment matches (no negated classes are generated)."""
    out, i = [], 0
    while i < len(glob):
        c = glob[i]
        if c == "[":
            close = glob.index("]", i + 2)
            out.append(glob[i + 1])
            i = close + 1
            continue
        out.append({"*": "", "?": "x"}.get(c, c))
        i += 1
    return "".join(out) or "x"


def covers_below(pattern: str, rel: str) -> bool:
    """Does `pattern` cover `rel` or some path below it (a Bash target is a path and
    everything below it)? Witnesses are built from the pattern's own segments."""
    if covers(pattern, rel):
        return True
    segs = [s for s in pattern.rstrip("/").split("/") if s != "**"]
    depth = len(rel.split("/"))
    tails = {"x", "x/y"}
    for start in range(len(segs) + 1):
        tail = [_sample_name(s) for s in segs[start:]]
        if tail:
            tails.add("/".join(tail))
            tails.add("/".join([*tail, "x"]))
    tails |= {"/".join([_sample_name(s) for s in segs[depth:]]) or "x"}
    return any(covers(pattern, f"{rel}/{tail}") for tail in tails)


def owner_label(owner: str) -> str:
    return f'agent "{owner}"' if not owner.startswith("~") else owner[1:9]


class Expected:
    def __init__(self) -> None:
        self.required: list[str] = []  # owners or writer keys that must block
        self.possible: list[str] = []  # that may block
        self.silent: list[str] = []  # owners of covering entries whose holder does not count

    @property
    def deny(self) -> bool:
        return bool(self.required)


def bash_parsed(world: fw.World, ledger: ds.Ledger, me: str, now: float) -> bool:
    """Whether PreToolUse parses a Bash command at all (`shell_gate`'s gate): another
    owner holds a live exclusive reservation, strict mode, or another writer's card
    was touched within the current lease minutes or has a later lease (its atime,
    set by every claim to the end of the writer's latest lease). Lease blockers of
    a Bash command are required only while this gate is open: a card left damaged
    or aged (not as a claim leaves it) may close it."""
    owner = fw.key_parts(me)[0]
    if ledger.strict or any(
        r.owner != owner and r.exclusive and r.live(now)
        for r in [*ledger.valid(), *ledger.ambiguous()]
    ):
        return True
    directory = world.ledger / "writers"
    window = ledger.lease_minutes * 60 + 60
    mine = fw.escape_name(me)
    return directory.is_dir() and any(
        path.name != mine
        and not path.name.startswith(".")
        and (path.lstat().st_mtime + window > now or path.lstat().st_atime + 60 > now)
        for path in directory.iterdir()
    )


def expected(
    ledger: ds.Ledger,
    me: str,
    rel: str,
    bash: bool,
    now: float,
    gate: bool = True,
    started: float | None = None,
) -> Expected:
    """What a PreToolUse that ran from `started` to `now` must and may deny for:
    `required` (valid entries that block), `possible` (ambiguous ones, and holders
    whose standing changed while it ran). A valid entry whose holder does not count
    (its process gone, without --keep; on another host, silent) is in neither."""
    started = now if started is None else started
    found = Expected()
    owner = fw.key_parts(me)[0]
    cover = covers_below if bash else covers
    for res in [*ledger.valid(), *ledger.ambiguous()]:
        if res.owner == owner or not res.exclusive or not res.live(now):
            continue
        assert res.pattern is not None and res.owner is not None
        if not cover(res.pattern, rel):
            continue
        counted = {  # at the hook's start and at its end: a card may go stale in between
            ds.holder_counts(res.holder, res.keep, res.owner, ledger.card_fresh(res.owner, t))
            for t in (started, now)
        }
        if res.label != "valid" or len(counted) > 1:
            found.possible.append(owner_label(res.owner))
        elif counted == {True}:
            found.required.append(owner_label(res.owner))
        else:  # a valid entry whose holder no longer counts: it must not deny (ADR-0014)
            found.silent.append(owner_label(res.owner))
    if ledger.strict:
        mine = [
            r
            for r in [*ledger.valid(), *ledger.ambiguous()]
            if r.owner == owner and r.live(now) and r.pattern and covers(r.pattern, rel)
        ]
        if not any(r.label == "valid" for r in mine):
            (found.possible if mine else found.required).append("strict")
    if ledger.lease_minutes == 0:
        return found
    for lf in ledger.lease_files:
        if lf.kind != "ok" or not (lf.rel == rel or (bash and lf.rel.startswith(rel + "/"))):
            continue
        for lease in lf.items:
            if lease.label == "malformed" or lease.expires <= now:
                continue
            if lease.holder in ("dead", "reused"):
                continue
            if lease.same_worktree:
                blocks = fw.lease_blocks(lease.writer, me)
            else:
                blocks = ledger.worktree_leases == "deny"
            if blocks:  # named by its key's owner, or by the agent the lease records
                labels = [owner_label(fw.key_parts(lease.writer)[0])]
                raw = lease.raw if isinstance(lease.raw, dict) else {}
                if isinstance(raw.get("agent"), str):
                    labels.append(owner_label(raw["agent"]))
                elif isinstance(raw.get("conversation"), str):
                    labels.append(raw["conversation"][:8])
                required = lease.label == "valid" and (gate or not bash)
                (found.required if required else found.possible).extend(labels)
    return found


def edit_payload(world: fw.World, tool: str, rel: str, me: str) -> dict[str, Any]:
    path = str(world.project / rel)
    if tool == "Bash":
        payload = load_payload("PreToolUse_Bash", str(world.project), str(world.home))
        payload["tool_input"] = {"command": f"echo x > {shlex.quote(rel)}"}
    else:
        payload = load_payload("PreToolUse_Write", str(world.project), str(world.home))
        key = "notebook_path" if tool == "NotebookEdit" else "file_path"
        payload["tool_name"] = tool
        payload["tool_input"] = {key: path, "content": "x\n"}
    if me == "sub":
        payload.update(agent_id=ds.A_ID, agent_type="general-purpose")
    payload["session_id"] = fw.SESSION
    return payload


def env_of(world: fw.World, me: str) -> dict[str, str | bytes]:
    return world.env(None if me == "unnamed" else fw.ME)


CHECKS = st.lists(
    st.tuples(st.sampled_from(ds.TARGETS), st.sampled_from(EDIT_TOOLS)), min_size=1, max_size=5
)


def check_denials(
    world: fw.World, ledger: ds.Ledger, me: str, checks: list[tuple[str, str]]
) -> None:
    """Run each edit through PreToolUse: denied if and only if `expected` says so,
    naming a holder that may block and none whose holder does not count."""
    for rel, tool in checks:
        payload = edit_payload(world, tool, rel, me)
        before = fw.snapshot(world.root)
        started = time.time()
        ran = world.run("PreToolUse", json.dumps(payload).encode(), env_of(world, me))
        out = fw.check_all(world, ran, before)
        denied = fw.decision_of(out) == "deny"
        moment = time.time()
        gate = bash_parsed(world, ledger, WRITERS_OF_ME[me], moment)
        want = expected(ledger, WRITERS_OF_ME[me], rel, tool == "Bash", moment, gate, started)
        event(f"{tool}: denied={denied}, required={want.deny}")
        if want.silent and not want.deny:
            event("a covering entry whose holder does not count, alone")
        reason = fw.reason_of(out)
        if want.deny:
            assert denied, (tool, rel, me, want.required, world.log_lines()[-3:])
        if denied:  # and only for an entry that may block: not for one whose holder is gone
            named = want.required + want.possible
            assert named, (tool, rel, me, want.silent, reason)
            assert any(label in reason for label in named) or "strict" in named, (named, reason)
            unnamed = [label for label in want.silent if label not in named]
            assert not any(label in reason for label in unnamed), (unnamed, reason)


@fw.fuzz_settings()
@given(data=st.data(), me=st.sampled_from(list(WRITERS_OF_ME)), checks=CHECKS)
def test_an_edit_is_denied_exactly_when_a_valid_entry_with_a_live_holder_covers_it(
    tmp_path_factory: pytest.TempPathFactory,
    data: st.DataObject,
    me: str,
    checks: list[tuple[str, str]],
) -> None:
    with fw.World(tmp_path_factory.getbasetemp()) as world:
        now = time.time()
        ledger = data.draw(ds.ledgers(now), label="ledger")
        ledger.write(world, now)
        event(f"ledger: {ledger.shape}, {len(ledger.valid())} valid entries")
        check_denials(world, ledger, me, checks)


@fw.fuzz_settings()
@given(data=st.data(), me=st.sampled_from(list(WRITERS_OF_ME)))
def test_a_reservation_denies_an_edit_exactly_while_its_holder_counts(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject, me: str
) -> None:
    """Valid reservations only, each made by a Claude Code process that lives, died,
    was replaced under its pid, or runs on another host heard from lately or not
    (ADR-0014, ADR-0015), and edits of the paths they cover: whether each holder
    counts is all that decides."""
    with fw.World(tmp_path_factory.getbasetemp()) as world:
        now = time.time()
        ledger = data.draw(ds.holder_ledgers(now), label="ledger")
        ledger.write(world, now)
        covered = [
            t for t in ds.TARGETS for r in ledger.entries if r.pattern and covers(r.pattern, t)
        ]
        targets = st.sampled_from(covered) if covered else st.sampled_from(ds.TARGETS)
        tools = st.sampled_from(EDIT_TOOLS)
        checks = data.draw(st.lists(st.tuples(targets, tools), min_size=1, max_size=3))
        check_denials(world, ledger, me, checks)


# -- never loses a valid entry ----------------------------------------------------------


OPS = st.one_of(
    st.tuples(
        st.just("reserve"),
        st.sampled_from([fw.THIRD, fw.ME, fw.ENDER, "fresh__cc"]),
        st.integers(0, 9),
        st.booleans(),
    ),
    st.tuples(st.just("release"), st.sampled_from([fw.THIRD, fw.ENDER, "fresh__cc"])),
    st.tuples(st.just("reservations")),
    st.tuples(st.just("post"), st.sampled_from(ds.TARGETS)),
    st.tuples(st.just("end"), st.sampled_from([fw.SESSION, fw.OTHER_SESSION])),
    st.tuples(st.just("start")),
    st.tuples(st.just("pre"), st.sampled_from(ds.TARGETS)),
    st.tuples(st.just("subagent_stop")),
    st.tuples(st.just("stop")),
)


def cli(world: fw.World, agent: str, *args: str) -> None:
    environ = {
        "HOME": str(world.home),
        "CLAUDE_PROJECT_DIR": str(world.project),
        "AGENT_NAME": agent,
        "CLAUDE_PID": str(os.getpid()),
        "CLAUDE_CODE_SESSION_ID": fw.OTHER_SESSION,
    }
    result = CliRunner().invoke(cli_main, list(args), obj=Env(environ=environ, now=time.time()))
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        args,
        result.exception,
        result.output,
    )
    assert result.exit_code in (0, 1), (args, result.exit_code, result.output)
    text = result.output + result.stderr
    assert "Traceback" not in text, text
    if result.exit_code == 1:
        errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1 and result.stderr.rstrip("\n").endswith(errors[0]), result.stderr
    event(f"cli {args[0]}: exit {result.exit_code}")


def hook(world: fw.World, name: str, agent: str | None, **stdin: Any) -> None:
    payload = load_payload(name, str(world.project), str(world.home), **stdin)
    event_name = name.split("_")[0]
    before = fw.snapshot(world.root)
    ran = world.run(event_name, json.dumps(payload).encode(), world.env(agent))
    fw.check_all(world, ran, before)


def run_op(world: fw.World, op: tuple[Any, ...]) -> None:
    kind = op[0]
    if kind == "reserve":
        args = ["reserve", f"fresh-{op[2]}/**", "--reason", "fuzz-1", "--ttl", "2h"]
        cli(world, op[1], *args, *(["--keep"] if op[3] else []))
    elif kind == "release":
        cli(world, op[1], "release", "--all")
    elif kind == "reservations":
        cli(world, fw.ME, "reservations", "--json")
        cli(world, fw.ME, "reservations", "--all-projects")
        cli(world, fw.ME, "reservations", "--dropped", "--json")
    elif kind == "post":
        hook(
            world,
            "PostToolUse_Write",
            fw.ME,
            session_id=fw.SESSION,
            tool_input={"file_path": str(world.project / op[1]), "content": "x"},
        )
    elif kind == "end":
        hook(world, "SessionEnd", fw.ENDER, session_id=op[1])
    elif kind == "start":
        hook(world, "SessionStart_resume", fw.ME, session_id=fw.SESSION)
    elif kind == "pre":
        payload_tool = {"file_path": str(world.project / op[1]), "content": "x"}
        hook(world, "PreToolUse_Write", fw.ME, session_id=fw.SESSION, tool_input=payload_tool)
    elif kind == "subagent_stop":
        hook(world, "SubagentStop_background", fw.ME, session_id=fw.SESSION, agent_id=ds.A_ID)
    else:
        hook(world, "Stop", fw.ME, session_id=fw.SESSION)


def same_entry(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def check_ledger_kept(
    world: fw.World,
    ledger: ds.Ledger,
    original: bytes,
    released: dict[str, bool],
    now: float,
) -> None:
    """`released`: owners whose reservations were released (True: `--keep` ones too)."""
    path = world.ledger / "reservations.json"
    raw = path.read_bytes() if path.exists() else b""
    if not ledger.readable:
        if raw != original:
            corrupt = [p.read_bytes() for p in world.ledger.glob("reservations.json.corrupt-*")]
            assert original in corrupt, "a ledger that is no JSON object was replaced unseen"
        return
    doc = json.loads(raw)
    assert isinstance(doc, dict)
    present = doc.get("reservations")
    present = present if isinstance(present, list) else []
    rejected = doc.get("rejected") if isinstance(doc.get("rejected"), list) else []
    dropped = doc.get("dropped") if isinstance(doc.get("dropped"), list) else []
    dropped_ids = {d.get("id") for d in dropped if isinstance(d, dict)}
    kept = {
        json.dumps([r.get("id"), r.get("agent"), r.get("pattern")])
        for r in present
        if isinstance(r, dict)
    }

    def set_aside(placed: Any) -> bool:
        return any(isinstance(x, dict) and same_entry(placed, x.get("entry")) for x in rejected)

    for res, placed in zip(ledger.entries, ledger.written["reservations"], strict=True):
        if res.label == "malformed":
            still = any(same_entry(placed, r) for r in present)
            assert still or set_aside(placed), (
                f"a malformed entry ({res.why}) vanished without a trace: {placed!r:.300}"
            )
            continue
        if json.dumps([res.id, res.agent, res.pattern]) in kept or res.expires_at <= now:
            continue  # there, or expired (pruned at the next write)
        if res.owner in released and (released[res.owner] or not res.keep):
            continue  # released by its own agent
        if res.holder in ("dead", "reused") and not res.keep:
            assert res.id in dropped_ids, f"{res.id} was dropped without saying so"
            continue
        if res.label == "ambiguous":
            assert set_aside(placed) or res.id in dropped_ids, (
                f"an odd entry ({res.why}) vanished without a trace: {placed!r:.300}"
            )
            continue
        raise AssertionError(f"a valid reservation was lost: {placed!r:.400}")


def check_leases_kept(
    world: fw.World, ledger: ds.Ledger, gone_writers: set[str], claimed: set[str], now: float
) -> None:
    worktree = repository.worktree_id(str(world.project))
    for lf in ledger.lease_files:
        if lf.kind != "ok":
            continue
        current = fw.leases_on(world.ledger, lf.rel)
        for lease in lf.items:
            if lease.label != "valid" or lease.expires <= now + 5:
                continue
            if lease.holder in ("dead", "reused") or lease.writer in gone_writers:
                continue
            if (
                lf.rel in claimed
                and lease.same_worktree
                and not fw.lease_blocks(lease.writer, fw.ME)
            ):
                continue  # this agent's claim took the file over (its own or its subagent's)
            want = {k: v for k, v in lease.raw.items() if k != "worktree"}
            assert any(
                all(item.get(k) == v for k, v in want.items())
                and (item.get("worktree") == worktree) == lease.same_worktree
                for item in current
            ), f"a counting lease on {lf.rel} was lost: {lease.raw!r:.300}"


def check_state_kept(
    world: fw.World, agent: str, doc: ds.StateDoc, posted: list[str], now: float
) -> None:
    path = world.state_dir / f"state-{agent}.json"
    current = json.loads(path.read_bytes())
    assert isinstance(current, dict)
    lists = {name: current.get(name) for name in ds.TRAIL_FIELDS}
    lists = {name: v if isinstance(v, list) else [] for name, v in lists.items()}
    trail = [p for paths in lists.values() for p in paths]
    missing = [p for p in posted if p not in trail]
    assert not missing, f"{agent}'s trail did not record {missing} (log: {world.log_lines()[-2:]})"
    for name, paths in doc.trail.items():
        placed = ds.place(world, paths)
        missing = [p for p in placed if p not in lists[name]]
        assert not missing, f"{agent}'s {name} lost {missing}"
    mirrors = current.get("reservations")
    for mirror in doc.mirrors:
        assert isinstance(mirrors, list) and mirror in mirrors, f"{agent} lost {mirror}"


@fw.fuzz_settings()
@given(data=st.data(), ops=st.lists(OPS, min_size=1, max_size=4))
def test_rewriting_the_ledger_and_state_never_loses_a_valid_entry(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject, ops: list[tuple[Any, ...]]
) -> None:
    with fw.World(tmp_path_factory.getbasetemp()) as world:
        now = time.time()
        ledger = data.draw(ds.ledgers(now), label="ledger")
        ledger.write(world, now)
        path = world.ledger / "reservations.json"
        original = path.read_bytes() if path.exists() else b""
        states = {
            agent: data.draw(ds.state_docs(now), label=f"state of {agent}")
            for agent in (fw.ME, fw.OTHER)
        }
        for agent, doc in states.items():
            ds.write_state(world, agent, doc)
        event(f"ledger: {ledger.shape}")
        released: dict[str, bool] = {}
        gone_writers: set[str] = set()
        claimed: set[str] = set()
        posted: list[str] = []
        for op in ops:
            run_op(world, op)
            if op[0] == "release":
                released[op[1]] = True
            elif op[0] == "end":
                released.setdefault(fw.ENDER, False)
            elif op[0] == "subagent_stop":
                gone_writers.add(f"{fw.ME}#{ds.A_ID}")
            elif op[0] == "pre":
                claimed.add(op[1])
            elif op[0] == "post":
                posted.append(str(world.project / op[1]))
            moment = time.time()
            check_ledger_kept(world, ledger, original, released, moment)
            check_leases_kept(world, ledger, gone_writers, claimed, moment)
            for agent, doc in states.items():
                check_state_kept(world, agent, doc, posted if agent == fw.ME else [], moment)
