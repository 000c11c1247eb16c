"""Claude Code runs `<python> -IS hooks/entry.py <Event>`: find agent_hooks, run the adapter.

Kept tiny because a script is compiled on every run (modules come from cached .pyc).
install.sh compiles it (entry.pyc), which is what the installed hook commands run.
The package is the src/ tree beside this file (a clone, the plugin), else the venv whose
bin/python runs this (install.sh's copy; under -S sys.prefix is the base interpreter's).
Whatever happens it exits 0: a hook that cannot start must never block Claude Code.
Once the adapter has answered (its output written and flushed, its files closed, its
locks released) the process ends at once, without the interpreter's finalization:
freeing every object one by one cost more instructions (~7 M) than the hook's own work.
The cyclic garbage collector is off for the same reason: a hook lives for milliseconds
and makes no garbage worth collecting, but loading its modules allocates enough objects
to start several collections (~0.9 M instructions; each walks every object made so far).
"""

import gc  # a built-in module: nothing to load
import sys

gc.disable()

try:
    from posix import _exit, stat

    _src = (__file__.rpartition("/")[0] or ".") + "/../src"
    _venv = sys.executable.rpartition("/")[0].rpartition("/")[0]
    _site = f"{_venv}/lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages"
    try:
        stat(_src + "/agent_hooks/__init__.py")
        sys.path[:0] = [_src]
        sys.path.append(_site)  # third-party packages, after the standard library
    except OSError:
        sys.path.insert(0, _site)
    from agent_hooks.hooks import main
except Exception as exc:
    sys.stderr.write(f"agent-hooks: hook could not run ({type(exc).__name__}: {exc}); allowed\n")
    sys.exit(0)
_code = main(sys.argv[1:])
for _stream in (sys.stdout, sys.stderr):
    try:
        _stream.flush()
    except Exception:  # the client closed that pipe: nothing more can reach it there
        pass
_exit(_code if type(_code) is int else 0)
