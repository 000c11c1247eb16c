"""Which files git ignores, as git reads its ignore files, without running git:
the work tree's `.gitignore` files, `info/exclude` in the common git directory
and `core.excludesFile` (docs/adr/0024-kept-versions.md). A file git ignores is
never kept: a secret in `.env` must not be copied where it outlives its
deletion. `kept_store` remembers each answer with the files it was read from, so
a hook runs this only when one of them changed.

Invariants:

* Patterns mean what git's `dir.c` and `wildmatch.c` (git 2.39) make of them:
  a UTF-8 byte order mark skipped, a CR before the newline dropped, `#`
  comments, trailing blanks cut unless escaped, `!` negates, a trailing `/` only
  matches a directory, a pattern without an inner `/` matches a name at any
  depth, `*` `?` `[…]` never match `/`, `**` spans directories, `[:alpha:]` and
  the other ASCII classes, a malformed class matches nothing; the last matching
  pattern decides, a deeper `.gitignore` over a shallower, those over
  `info/exclude`, that over the excludes file; once a directory is ignored
  everything below it is (a `!` cannot bring a file back). Bytes are compared,
  as git compares them (tests/unit/kept/test_ignore_rules.py checks against
  `git check-ignore`).
* Conservative where git's answer cannot be known without git: every
  `core.excludesFile` any config file names (includes followed whatever their
  condition, at most `MAX_CONFIG_FILES` files) and the default
  `~/.config/git/ignore` all count; `core.ignoreCase` set anywhere makes a
  case-blind match count too; an ignore or config file that exists but cannot be
  read raises OSError (the caller takes the file as ignored); a file git tracks
  that a pattern matches counts as ignored (git would keep tracking it; the
  index is not read).
* Built-ins only (no `re`, no `fnmatch`, no subprocess): a hook may need it.
"""

from __future__ import annotations

import marshal
import posix

from agent_hooks import fingerprints
from agent_hooks import posix_fs as fs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Callable, Mapping
    from typing import Any

    Rule = tuple[int, bytes, bytes, int]  # flags, base ("" or "dir/"), pattern + NUL, prefix
    Key = tuple[int, int, int, int] | None

NEGATIVE, MUST_BE_DIR, NO_DIR, ENDS_WITH = 1, 2, 4, 8

_MATCH, _NOMATCH, _ABORT_ALL, _ABORT_TO_STARSTAR = 0, 1, -1, -2
_STAR, _QUESTION, _BRACKET, _BACKSLASH, _SLASH = 42, 63, 91, 92, 47
_SPECIAL = frozenset(b"*?[\\")
# --------------------------------------------------------------------------- patterns


def _matches(rule: Rule, path: bytes, name: bytes, is_dir: bool) -> bool:
    """Does `rule` match `path` (relative to the work tree; `name`: its last part)?"""
    flags, base, pattern, prefix = rule
    if flags & MUST_BE_DIR and not is_dir:
        return False
    length = len(pattern) - 1
    if flags & NO_DIR:
        if prefix == length:
            return name == pattern[:-1]
        if flags & ENDS_WITH:
            return length - 1 <= len(name) and name.endswith(pattern[1:-1])
        return _dowild(pattern, 0, name + b"\0", 0, False) == _MATCH
    start = 0
    if pattern[0] == _SLASH:
        start, prefix = 1, prefix - 1
    if base:
        if not path.startswith(base) or len(path) <= len(base):
            return False
        path = path[len(base) :]
    if prefix:
        if prefix > len(path) or path[:prefix] != pattern[start : start + prefix]:
            return False
        if start + prefix == length:
            return len(path) == prefix
    return _dowild(pattern, start + prefix, path + b"\0", prefix, True) == _MATCH


def _dowild(p: bytes, pi: int, t: bytes, ti: int, pathname: bool) -> int:
    """git's wildmatch (`dowild`) on NUL-terminated `p` from `pi` and `t` from `ti`."""
    while True:
        p_ch = p[pi]
        if p_ch == 0:
            break
        t_ch = t[ti]
        if t_ch == 0 and p_ch != _STAR:
            return _ABORT_ALL
        if p_ch == _BACKSLASH:
            pi += 1
            if t_ch != p[pi]:
                return _NOMATCH
        elif p_ch == _QUESTION:
            if pathname and t_ch == _SLASH:
                return _NOMATCH
        elif p_ch == _STAR:
            pi += 1
            if p[pi] == _STAR:
                before = pi - 2
                while p[pi] == _STAR:
                    pi += 1
                if (before < 0 or p[before] == _SLASH) and (
                    p[pi] == 0 or p[pi] == _SLASH or (p[pi] == _BACKSLASH and p[pi + 1] == _SLASH)
                ):
                    if p[pi] == _SLASH and _dowild(p, pi + 1, t, ti, pathname) == _MATCH:
                        return _MATCH
                    match_slash = True
                else:
                    match_slash = False
            else:
                match_slash = not pathname
            if p[pi] == 0:
                if not match_slash and t.find(b"/", ti) >= 0:
                    return _NOMATCH
                return _MATCH
            if not match_slash and p[pi] == _SLASH:
                slash = t.find(b"/", ti)
                if slash < 0:
                    return _NOMATCH
                ti = slash  # the slash is consumed below, with the pattern's
            else:
                while t_ch != 0:
                    if p[pi] not in _SPECIAL:
                        want = p[pi]
                        t_ch = t[ti]
                        while t_ch != 0 and (match_slash or t_ch != _SLASH):
                            if t_ch == want:
                                break
                            ti += 1
                            t_ch = t[ti]
                        if t_ch != want:
                            return _NOMATCH
                    matched = _dowild(p, pi, t, ti, pathname)
                    if matched != _NOMATCH:
                        if not match_slash or matched != _ABORT_TO_STARSTAR:
                            return matched
                    elif not match_slash and t_ch == _SLASH:
                        return _ABORT_TO_STARSTAR
                    ti += 1
                    t_ch = t[ti]
                return _ABORT_ALL
        elif p_ch == _BRACKET:
            found = _bracket(p, pi, t_ch)
            if found is None:
                return _ABORT_ALL
            matched_class, pi = found
            if not matched_class or (pathname and t_ch == _SLASH):
                return _NOMATCH
        elif t_ch != p_ch:
            return _NOMATCH
        pi += 1
        ti += 1
    return _NOMATCH if t[ti] != 0 else _MATCH


def _last_match(stack: list[list[Rule]], path: bytes, name: bytes, is_dir: bool) -> Rule | None:
    for rules in reversed(stack):
        for rule in reversed(rules):
            if _matches(rule, path, name, is_dir):
                return rule
    return None


def excluded(stack: list[list[Rule]], rel: bytes, fold: bool = False) -> bool:
    """Whether the file `rel` (relative to the work tree) is excluded by `stack`
    (rule lists, lowest precedence first), walked down as git walks: for rules
    that come from no directory of the work tree (the settings' exclusions)."""
    return _walk(lambda _prefix: [], list(stack), rel, fold)


def _walk(
    more: Callable[[bytes], list[Rule]],
    stack: list[list[Rule]],
    rel: bytes,
    fold: bool,
) -> bool:
    """git's walk down to `rel`: each directory on the way is checked against the
    rules gathered so far (an ignored one ends the walk: ignored), then its own
    rules (`more(prefix)`) are added; last the file itself."""
    if fold:
        rel = rel.lower()
    parts = rel.split(b"/")
    prefix = b""
    for part in parts[:-1]:
        prefix = prefix + b"/" + part if prefix else part
        hit = _last_match(stack, prefix, part, True)
        if hit is not None and not hit[0] & NEGATIVE:
            return True
        found = more(prefix + b"/")
        if found:
            stack.append(found)
    hit = _last_match(stack, rel, parts[-1], False)
    return hit is not None and not hit[0] & NEGATIVE


_CLASSES = (
    b"alnum", b"alpha", b"blank", b"cntrl", b"digit", b"graph",
    b"lower", b"print", b"punct", b"space", b"upper", b"xdigit",
)  # fmt: skip


def _in_class(name: bytes, c: int) -> bool:
    """Is the byte `c` in the POSIX class `name` (ASCII only, as git's sane ctype)?"""
    one = bytes((c,))
    if name == b"alnum":
        return one.isalnum()
    if name == b"alpha":
        return one.isalpha()
    if name == b"blank":
        return c in (9, 32)
    if name == b"cntrl":
        return c < 32 or c == 127
    if name == b"digit":
        return one.isdigit()
    if name == b"graph":
        return 33 <= c < 127
    if name == b"lower":
        return one.islower()
    if name == b"print":
        return 32 <= c < 127
    if name == b"punct":
        return 33 <= c < 127 and not one.isalnum()
    if name == b"space":
        return one.isspace()
    if name == b"upper":
        return one.isupper()
    return c in b"0123456789abcdefABCDEF"  # xdigit


def _trim_trailing_spaces(line: bytes) -> bytes:
    """git's trim_trailing_spaces: trailing blanks go unless the first of them is escaped."""
    last_space = -1
    i = 0
    while i < len(line):
        c = line[i]
        if c == 32:
            if last_space < 0:
                last_space = i
        else:
            if c == _BACKSLASH:
                i += 1
                if i >= len(line):
                    return line
            last_space = -1
        i += 1
    return line[:last_space] if last_space >= 0 else line


def _simple_length(pattern: bytes) -> int:
    for i, c in enumerate(pattern):
        if c in _SPECIAL:
            return i
    return len(pattern)


def parse(text: bytes, base: bytes = b"") -> list[Rule]:
    """The rules of one ignore file's `text`, relative to `base` (`""` for the
    top of the work tree, else `"dir/sub/"`), in the file's order."""
    if text.startswith(b"\xef\xbb\xbf"):
        text = text[3:]
    rules: list[Rule] = []
    for raw in text.split(b"\n"):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if not raw or raw[0] == 35:  # '#'
            continue
        rule = compile_pattern(_trim_trailing_spaces(raw), base)
        if rule is not None:
            rules.append(rule)
    return rules


def compile_pattern(pattern: bytes, base: bytes = b"") -> Rule | None:
    """One pattern line (already trimmed) as a rule; None for one that matches nothing."""
    flags = 0
    if pattern[:1] == b"!":
        flags |= NEGATIVE
        pattern = pattern[1:]
    if pattern.endswith(b"/"):
        flags |= MUST_BE_DIR
        pattern = pattern[:-1]
    if not pattern:
        return None
    if b"/" not in pattern:
        flags |= NO_DIR
    prefix = _simple_length(pattern)
    if pattern[0] == _STAR and _simple_length(pattern[1:]) == len(pattern) - 1:
        flags |= ENDS_WITH
    return (flags, base, pattern + b"\0", prefix)


def _bracket(p: bytes, pi: int, t_ch: int) -> tuple[bool, int] | None:
    """A `[…]` class at `pi` against `t_ch`: (whether it matches, the index of its
    closing `]`), or None when the pattern is malformed (git aborts the match)."""
    pi += 1
    p_ch = p[pi]
    if p_ch == 94:  # '^'
        p_ch = 33  # '!'
    negated = p_ch == 33
    if negated:
        pi += 1
        p_ch = p[pi]
    prev_ch = 0
    matched = False
    while True:
        if p_ch == 0:
            return None
        if p_ch == _BACKSLASH:
            pi += 1
            p_ch = p[pi]
            if p_ch == 0:
                return None
            if t_ch == p_ch:
                matched = True
        elif p_ch == 45 and prev_ch and p[pi + 1] and p[pi + 1] != 93:  # '-', not before ']'
            pi += 1
            p_ch = p[pi]
            if p_ch == _BACKSLASH:
                pi += 1
                p_ch = p[pi]
                if p_ch == 0:
                    return None
            if prev_ch <= t_ch <= p_ch:
                matched = True
            p_ch = 0
        elif p_ch == 91 and p[pi + 1] == 58:  # '[:'
            start = pi = pi + 2
            while p[pi] and p[pi] != 93:
                pi += 1
            if p[pi] == 0:
                return None
            size = pi - start - 1
            if size < 0 or p[pi - 1] != 58:  # no ':]': a plain '['
                pi = start - 2
                p_ch = 91
                if t_ch == p_ch:
                    matched = True
            else:
                name = p[start : start + size]
                if name not in _CLASSES:
                    return None  # a malformed class: git aborts the match
                if _in_class(name, t_ch):
                    matched = True
                p_ch = 0
        elif t_ch == p_ch:
            matched = True
        prev_ch = p_ch
        pi += 1
        p_ch = p[pi]
        if p_ch == 93:  # ']'
            return matched != negated, pi


def read(path: str) -> bytes:
    """A file's content; b"" when it is not there; OSError when it cannot be read."""
    try:
        fd = posix.open(path, posix.O_RDONLY | posix.O_CLOEXEC | posix.O_NONBLOCK)
    except (FileNotFoundError, NotADirectoryError):
        return b""
    try:
        chunks = []
        while chunk := posix.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        posix.close(fd)


def _unquote(value: str) -> str:
    """A git config value: quotes removed, escapes read, a comment cut."""
    out = []
    quoted = False
    i = 0
    while i < len(value):
        c = value[i]
        if c == '"':
            quoted = not quoted
        elif c == "\\" and i + 1 < len(value):
            i += 1
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(value[i], value[i]))
        elif c in "#;" and not quoted:
            break
        else:
            out.append(c)
        i += 1
    return "".join(out).strip()


def config_values(text: str) -> list[tuple[str, str]]:
    """(section.key in lower case, value) of each `key = value` line of a git config
    file that matters here: `core.excludesfile`, `core.ignorecase`, `include.path`
    and `includeif.<condition>.path` (a subsection keeps its case: only the key
    matters). Lines ending in a backslash continue; a key without `=` is true."""
    found = []
    section = ""
    for line in text.replace("\\\r\n", "").replace("\\\n", "").splitlines():
        line = line.strip()
        if line.startswith("["):
            close = line.find("]")
            header = line[1:close] if close > 0 else line[1:]
            name, _, sub = header.partition(" ")
            section = name.strip().lower()
            if "." in section and not sub:  # [section.sub], the old form
                section = section.partition(".")[0]
            line = line[close + 1 :].strip() if close > 0 else ""
        if not line or line[0] in "#;":
            continue
        key, eq, value = line.partition("=")
        key = key.strip().lower()
        if (section == "core" and key in ("excludesfile", "ignorecase")) or (
            section in ("include", "includeif") and key == "path"
        ):
            found.append((f"{section}.{key}", _unquote(value) if eq else "true"))
    return found


def _config_files(environ: Mapping[str, str], git_dir: str, common: str) -> list[str]:
    """The config files git reads in this work tree, in its order."""
    home = environ.get("HOME", "")
    xdg = environ.get("XDG_CONFIG_HOME") or (fs.join(home, ".config") if home else "")
    files = []
    if str(environ.get("GIT_CONFIG_NOSYSTEM", "")).lower() not in _TRUE:
        files.append(environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig")
    if environ.get("GIT_CONFIG_GLOBAL"):
        files.append(environ["GIT_CONFIG_GLOBAL"])
    else:
        files += [fs.join(xdg, "git", "config")] if xdg else []
        files += [fs.join(home, ".gitconfig")] if home else []
    return [*files, fs.join(common, "config"), fs.join(git_dir, "config.worktree")]


_TRUE = ("1", "true", "yes", "on")
MAX_CONFIG_FILES = 20  # includes followed at most this far (an include loop ends)


def _expand(path: str, relative_to: str, home: str) -> str:
    path = fs.expanduser(path, home)
    return path if fs.isabs(path) else fs.normpath(fs.join(relative_to, path))


def read_config(
    environ: Mapping[str, str], top: str, git_dir: str, common: str
) -> tuple[list[tuple[str, Key]], list[str], bool]:
    """What the config files say about ignoring: (the files read, each with its
    key; every excludes file named, with git's default; whether any turns
    `core.ignoreCase` on). Includes are followed whatever their condition; the
    `GIT_CONFIG_COUNT` pairs of the environment count too."""
    home = environ.get("HOME", "")
    xdg = environ.get("XDG_CONFIG_HOME") or (fs.join(home, ".config") if home else "")
    seen: list[tuple[str, Key]] = []
    excludes = [fs.join(xdg, "git", "ignore")] if xdg else []
    fold = False
    todo = _config_files(environ, git_dir, common)
    while todo and len(seen) < MAX_CONFIG_FILES:
        path = todo.pop(0)
        found = fingerprints.version_key(path)
        seen.append((path, found))
        if found is None:
            continue
        for name, value in config_values(read(path).decode("utf-8", "surrogateescape")):
            if name == "core.excludesfile" and value:
                excludes.append(_expand(value, top, home))
            elif name == "core.ignorecase":
                fold = fold or value.lower() in _TRUE
            elif value:
                todo.append(_expand(value, fs.dirname(path), home))
    for n in range(small_count(environ.get("GIT_CONFIG_COUNT"))):
        name = environ.get(f"GIT_CONFIG_KEY_{n}", "").lower()
        value = environ.get(f"GIT_CONFIG_VALUE_{n}", "")
        if name == "core.excludesfile" and value:
            excludes.append(_expand(value, top, home))
        elif name == "core.ignorecase" and value.lower() in _TRUE:
            fold = True
    return seen, excludes, fold


def small_count(raw: str | None) -> int:
    return int(raw) if raw and raw.isascii() and raw.isdigit() and len(raw) < 4 else 0


def decide(
    top: str, git_dir: str, common: str, environ: Mapping[str, str], rel: str
) -> tuple[bool, list[tuple[str, Key]]]:
    """Whether git ignores the file `rel` of the work tree `top` (`git_dir`: its own
    git directory, `common`: the common one), or may; and every file the answer was
    read from (config files, excludes files, ignore files, absent ones too), each
    with its key. OSError when one of them cannot be read."""
    sources, excludes, fold = read_config(environ, top, git_dir, common)

    def rules_in(path: str, base: bytes) -> list[Rule]:
        found = fingerprints.version_key(path)
        sources.append((path, found))
        return parse(read(path), base) if found is not None else []

    stack = [rules_in(path, b"") for path in excludes]
    stack.append(rules_in(fs.join(common, "info", "exclude"), b""))
    stack.append(rules_in(fs.join(top, ".gitignore"), b""))

    def more(prefix: bytes) -> list[Rule]:
        directory = prefix.decode("utf-8", "surrogateescape")
        return rules_in(fs.join(top, directory, ".gitignore"), prefix)

    raw = rel.encode("utf-8", "surrogateescape")
    answer = _walk(more, list(stack), raw, False)
    if not answer and fold:  # core.ignoreCase somewhere: a case-blind match counts too
        folded = [[_folded(rule) for rule in rules] for rules in stack]
        answer = _walk(lambda prefix: [_folded(r) for r in more(prefix)], folded, raw, True)
    return answer, sources


def _folded(rule: Rule) -> Rule:
    flags, base, pattern, prefix = rule
    return (flags, base.lower(), pattern.lower(), prefix)


def remember(
    path: str,
    where: tuple[object, ...],
    top: str,
    git_dir: str,
    common: str,
    environ: Mapping[str, str],
    rel: str,
) -> bool:
    """`decide`, its answer remembered at `path` (`kept_store.ignored`'s file for
    `rel`) with `where` and the keys of the files it was read from; OSError when one
    cannot be read (nothing remembered). A write that fails is passed over: the
    answer is derived."""
    answer, sources = decide(top, git_dir, common, environ, rel)
    from agent_hooks import storage

    try:
        fs.makedirs(fs.dirname(path), 0o700)
        remembered: Any = (where, answer, tuple(sources))
        storage.write_bytes_atomic(path, marshal.dumps(remembered), durable=False)
    except (OSError, ValueError):
        pass
    return answer


def matched(patterns: list[str], rel: str) -> bool:
    """Does the last of `patterns` (gitignore patterns, as of the top of the work
    tree) that matches `rel`, walked down as git walks, exclude it?"""
    rules = [compile_pattern(p.encode("utf-8", "surrogateescape")) for p in patterns]
    found = [rule for rule in rules if rule is not None]
    return excluded([found], rel.encode("utf-8", "surrogateescape"))
