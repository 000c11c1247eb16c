"""Claude Code hook entry point: `<python> -IS hooks/entry.py <Event>`.

It only locates the agent_hooks package — the source tree beside this file (a
clone, or the plugin), else the site-packages of the virtual environment whose
`bin/python` runs it (the copy install.sh made; under -S `sys.prefix` is the
base interpreter's, so the venv is found from `sys.executable`) — and runs the
adapter for <Event>.
Run with -I -S: no site import, no user paths; startup cost is paid on every
tool call of every agent. It exits 0 whatever happens: a hook that cannot even
start must never block Claude Code.
"""

import sys


def _main() -> int:
    import posix  # not os: importing os costs a fifth of the start-up (docs/adr)

    major, minor = sys.version_info[:2]
    venv = sys.executable.rpartition("/")[0].rpartition("/")[0]
    site_packages = f"{venv}/lib/python{major}.{minor}/site-packages"
    src = (__file__.rpartition("/")[0] or ".") + "/../src"
    try:
        posix.stat(src + "/agent_hooks/__init__.py")
        # A clone or the plugin: our own code from src/, the venv's packages after
        # the standard library (only SessionStart/CLI-side code ever imports them).
        sys.path[:0] = [src]
        sys.path.append(site_packages)
    except OSError:
        sys.path.insert(0, site_packages)
    from agent_hooks.hooks import EVENTS

    event = sys.argv[1] if len(sys.argv) > 1 else ""
    if event not in EVENTS:
        sys.stderr.write(f"agent-hooks: unknown hook event {event!r}; allowed\n")
        return 0
    adapter = __import__(f"agent_hooks.hooks.{EVENTS[event]}", fromlist=["main"])
    code: int = adapter.main()
    return code


try:
    _exit = _main()
except Exception as exc:  # the package is missing or broken: allow, and say why on stderr
    sys.stderr.write(f"agent-hooks: hook could not run ({type(exc).__name__}: {exc}); allowed\n")
    _exit = 0
sys.exit(_exit)
