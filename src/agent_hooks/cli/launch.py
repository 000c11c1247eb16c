"""`agent-hooks launch CLIENT [ARGS…]`: start a client in this tmux pane with
its agent named (docs/adr/0028-launch-names.md).

The name is `<session>__<code>_<pane>` as ntm writes it (`myproject__cc_1`):
the tmux session, the client's code (`clients.<module>.SHORT`: cc, cod, gmi, …)
and the pane's index as tmux shows it (`#{pane_index}`, which counts from the
window's `pane-base-index`) — or `--name NAME`. The client is then run in
place of this process (`os.execvp`) with `AGENT_NAME` set; nothing of
agent-hooks stays in between.

Invariants: the same pane and client give the same name at every launch; a
character an agent name may not hold (`/`, `#`, a blank, a control character)
becomes `_`; a name that still cannot be an agent name, a client not on PATH,
tmux not answering, or no tmux at all without `--name` is one line and exit 1
(an unknown client without `--name`: exit 2). Nothing is written.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import click

from agent_hooks import identity
from agent_hooks.hooks import CLIENTS

TMUX_TIMEOUT = 5.0  # seconds for tmux to answer display-message
PANE_FORMAT = "#{pane_index} #{session_name}"  # the index first: a session name may hold blanks


def client_code(client: str) -> str | None:
    """The code of the client program `client` (a name or a path): `cc` for
    claude, `cod` for codex, … (`clients.<module>.SHORT`); None for a program
    agent-hooks does not serve."""
    module = CLIENTS.get(os.path.basename(client))
    if module is None:
        return None
    found = __import__(f"agent_hooks.clients.{module}", fromlist=["SHORT"])
    code: str = found.SHORT
    return code


def pane_name(session: str, code: str, pane_index: str) -> str:
    """`<session>__<code>_<pane_index>`, every character an agent name may not
    hold replaced by `_` (tmux itself allows `/`, `#` and blanks in a session name)."""
    safe = "".join(c if c.isprintable() and c not in "/# \t" else "_" for c in session)
    return f"{safe.replace('..', '__').lstrip('~') or '_'}__{code}_{pane_index}"


def tmux_pane(environ: dict[str, str]) -> tuple[str, str]:
    """(pane index as tmux shows it, session name) of the pane this runs in."""
    pane = environ.get("TMUX_PANE", "")
    if not environ.get("TMUX") or not pane:
        raise click.ClickException(
            "not inside tmux: name the agent yourself, e.g. "
            "`agent-hooks launch --name myproject__cc_1 claude`"
        )
    tmux = shutil.which("tmux", path=environ.get("PATH"))
    if tmux is None:
        raise click.ClickException("tmux is not on PATH: give the agent's name with --name NAME")
    try:
        done = subprocess.run(
            [tmux, "display-message", "-p", "-t", pane, PANE_FORMAT],
            capture_output=True,
            text=True,
            errors="replace",
            env=environ,
            timeout=TMUX_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise click.ClickException(f"tmux did not answer ({exc}): give --name NAME") from None
    index, _, session = done.stdout.rstrip("\n").partition(" ")
    if done.returncode != 0 or not index.isdigit() or not session:
        why = " ".join(done.stderr.split()) or f"it printed {done.stdout[:80]!r}"
        raise click.ClickException(f"tmux could not name pane {pane} ({why}): give --name NAME")
    return index, session


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option(
    "--name",
    metavar="NAME",
    help="The agent's name (default: <session>__<client code>_<pane index> from tmux).",
)
@click.option(
    "--dry-run", is_flag=True, help="Print the name and the command instead of running it."
)
@click.argument("client")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def launch(name: str | None, dry_run: bool, client: str, args: tuple[str, ...]) -> None:
    """Run CLIENT (claude, codex, gemini, …) with ARGS in this terminal, its
    AGENT_NAME set: the tmux session, the client's code and the pane's index as
    tmux shows it (`myproject__cc_1`; the first pane is 0 unless tmux's
    pane-base-index says 1), or --name. The same pane gets the same name at
    every launch. Options after CLIENT are the client's own."""
    environ = dict(os.environ)
    if name is None:
        code = client_code(client)
        if code is None:
            known = ", ".join(CLIENTS)
            raise click.UsageError(
                f"{client!r} is not a client agent-hooks serves ({known}); "
                "give --name NAME to run it anyway"
            )
        index, session = tmux_pane(environ)
        name = pane_name(session, code, index)
    try:
        identity.check_agent_name(name)
    except identity.IdentityError as exc:
        raise click.ClickException(str(exc)) from None
    program = shutil.which(client, path=environ.get("PATH"))
    if program is None:
        raise click.ClickException(f"{client}: not found on PATH (is it installed?)")
    if dry_run:
        import shlex

        click.echo(f"AGENT_NAME={shlex.quote(name)} {shlex.join([client, *args])}")
        return
    environ["AGENT_NAME"] = name
    click.echo(f"agent-hooks: starting {client} as AGENT_NAME={name}", err=True)
    try:
        os.execve(program, [client, *args], environ)
    except OSError as exc:
        raise click.ClickException(f"{client}: cannot run it ({exc.strerror or exc})") from None


def register(group: click.Group) -> None:
    group.add_command(launch)
