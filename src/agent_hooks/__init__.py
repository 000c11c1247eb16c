"""agent-hooks: Claude Code hooks for many agents in one repository.

Importing the package installs `_CachedBytecode`, a finder for agent_hooks' own
submodules that loads their cached bytecode (`__pycache__/<name>.<tag>.pyc`)
directly: a bare module object holding its functions (a class costs ~65 k
instructions to create). Every hook is a new process on every tool call, and the
standard import system spends about 0.29 M instructions per module finding and
validating a cached module; this finder spends about 0.1 M
(docs/adr/0005-hot-path-budget.md). Invariants:

* It serves only `agent_hooks.*` modules, the standard library's `__future__`
  (which every `from __future__ import annotations` imports at run time), and the
  `_json` and `_blake2` extension modules (found where the standard finder would
  find them, without listing `lib-dynload`, and loaded by the standard extension
  loader). Bytecode it
  serves is valid exactly as the standard loader judges it: this interpreter's
  magic number, a timestamp pyc (flags 0) recording the source's current mtime
  and size. Any other case (no pyc, stale, hash-based, a pycache prefix, a
  `__main__`) returns None and the standard machinery imports the module (and
  writes its pyc), so the result is never different, only faster. One case needs
  no pyc: a package whose `__init__.py` is empty (most of ours) is made without
  reading, unmarshalling or running anything, left as running its empty code
  leaves it.
* Modules it loads get the same `__spec__`, `__file__`, `__cached__` and, for
  packages, `__path__` as the standard loader gives them; `get_code` serves
  `python -m`.
"""

# No `from __future__ import annotations` here: that statement imports `__future__` at
# run time, and this module runs before the finder below can serve it cheaply; the
# annotations that would need it are strings instead.

__version__ = "0.1.0"

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Callable, Sequence
    from importlib.machinery import ModuleSpec
    from types import CodeType, ModuleType


def _install() -> None:
    import marshal
    import posix
    import sys

    bootstrap = sys.modules.get("_frozen_importlib")
    external = sys.modules.get("_frozen_importlib_external")
    tag = sys.implementation.cache_tag
    if bootstrap is None or external is None or tag is None or sys.pycache_prefix is not None:
        return
    magic = external.MAGIC_NUMBER
    make_spec = bootstrap.ModuleSpec
    base = __file__.rpartition("/")[0].rpartition("/")[0]  # the directory holding agent_hooks/
    encodings = getattr(sys.modules.get("encodings"), "__file__", None)  # loaded at start-up
    stdlib = encodings.rpartition("/")[0].rpartition("/")[0] if encodings else None
    # `_json` and `_blake2` (the content hash of kept versions), the extension modules
    # the hooks load, where the standard path finder would find them: the first
    # `lib-dynload` directory on the path (no earlier entry holds either); left out
    # when built in or when there is no such directory.
    dynload = [entry for entry in sys.path if entry.endswith("/lib-dynload")]
    accelerators = {
        name: f"{dynload[0]}/{name}{external.EXTENSION_SUFFIXES[0]}"
        for name in ("_json", "_blake2")
        if dynload and external.EXTENSION_SUFFIXES and name not in sys.builtin_module_names
    }

    def read(path: str) -> bytes:
        # 64 KiB at a time: more than any module's bytecode, below the size at which the
        # allocator maps a bytes object of its own (a 4 MiB request would be mmapped,
        # shrunk and faulted in page by page for every module); no fstat, whose
        # stat_result costs as much as the read.
        fd = posix.open(path, posix.O_RDONLY | posix.O_CLOEXEC)
        try:
            data = posix.read(fd, 1 << 16)
            while len(data) % (1 << 16) == 0 and data:
                more = posix.read(fd, 1 << 16)
                if not more:
                    break
                data += more
            return data
        finally:
            posix.close(fd)

    def find_spec(
        name: str,
        path: "Sequence[str] | None" = None,
        target: "ModuleType | None" = None,
    ) -> "ModuleSpec | None":
        if name in accelerators:  # served without listing lib-dynload (~0.2 M instructions)
            accelerator = accelerators[name]
            if not posix.access(accelerator, posix.F_OK):
                return None
            loader = external.ExtensionFileLoader(name, accelerator)
            found: ModuleSpec = external.spec_from_file_location(name, accelerator, loader=loader)
            return found
        if name == "__future__" and stdlib:  # what `from __future__ import …` imports
            where = stdlib + "/__future__"
        elif not name.startswith("agent_hooks.") or name.endswith(".__main__"):
            return None
        else:
            where = base + "/" + name.replace(".", "/")
        # A package before a module of the same name, as the standard finder; asked
        # with access(), which raises nothing (a failed stat's OSError costs as much as
        # the stat).
        if posix.access(where + "/__init__.py", posix.F_OK):
            source, folder, stem, package = where + "/__init__.py", where, "__init__", True
        else:
            source = where + ".py"
            folder, _, stem = where.rpartition("/")
            package = False
        try:
            st = posix.stat(source)
        except OSError:
            return None
        cached = f"{folder}/__pycache__/{stem}.{tag}.pyc"
        empty = package and st.st_size == 0
        if empty:
            data = b""  # an empty __init__: nothing to read, unmarshal or run
        else:
            try:
                data = read(cached)
            except OSError:
                return None
        if not empty and (
            len(data) < 16
            or data[:4] != magic
            or data[4:8] != b"\0\0\0\0"
            or int.from_bytes(data[8:12], "little") != int(st.st_mtime) & 0xFFFFFFFF
            or int.from_bytes(data[12:16], "little") != st.st_size & 0xFFFFFFFF
        ):
            return None
        spec: ModuleSpec = make_spec(
            name, finder, origin=source, loader_state=data, is_package=package
        )
        spec.has_location = True
        spec.cached = cached
        if package:
            spec.submodule_search_locations = [where]
        return spec

    def create_module(spec: "ModuleSpec") -> None:
        return None

    def exec_module(module: "ModuleType") -> None:
        spec = module.__spec__
        assert spec is not None
        if spec.loader_state:
            exec(marshal.loads(memoryview(spec.loader_state)[16:]), module.__dict__)
        else:  # an empty __init__: what running its empty code leaves
            module.__builtins__ = __builtins__  # type: ignore[attr-defined]
        spec.loader_state = None

    def get_code(name: str) -> "CodeType":
        spec = find_spec(name)
        if spec is None:
            raise ImportError(f"no cached bytecode for {name}", name=name)
        if not spec.loader_state:
            empty: CodeType = compile("", spec.origin or name, "exec")
            return empty
        code: CodeType = marshal.loads(memoryview(spec.loader_state)[16:])
        return code

    # The finder and loader (its name is what `__loader__.__name__` shows).
    finder = type(sys)("_CachedBytecode")
    vars(finder).update(
        find_spec=find_spec, create_module=create_module, exec_module=exec_module, get_code=get_code
    )

    def preload(names: "Sequence[str]") -> None:
        modules = sys.modules
        if "importtime" in sys._xoptions:  # -X importtime measures the ordinary way
            return
        for name in names:
            if name in modules:
                continue
            parent, _, child = name.rpartition(".")
            if parent not in modules:  # a package before its modules, as an import does
                preload((parent,))
                if parent not in modules:
                    return
            spec = find_spec(name)
            if spec is None:
                return  # not cached yet: the ordinary import takes over from here
            module = type(sys)(name)
            module.__spec__ = spec
            module.__loader__ = finder
            module.__file__ = spec.origin
            module.__cached__ = spec.cached  # type: ignore[attr-defined]
            if spec.submodule_search_locations is not None:
                module.__path__ = spec.submodule_search_locations
                module.__package__ = name
            else:
                module.__package__ = name.rpartition(".")[0]
            modules[name] = module
            try:
                exec_module(module)
            except BaseException:
                del modules[name]
                raise
            setattr(modules[parent], child, module)

    sys.meta_path.insert(0, finder)
    _PRELOAD.append(preload)


_PRELOAD: "list[Callable[[Sequence[str]], None]]" = []


def preload(names: "Sequence[str]") -> None:
    """Load `names` (agent_hooks modules, each after those it imports) from cached
    bytecode at once (a module's packages first), skipping the import system's per-module work (~0.1 M
    instructions each): the hook adapters call it with the modules their event
    always needs. Each module ends up exactly as an import would leave it; a name
    already loaded is skipped, and the first one without valid cached bytecode
    ends the preload (ordinary imports load the rest). Off under `-X importtime`,
    so that measurement sees every import."""
    for run in _PRELOAD:
        run(names)


_install()
