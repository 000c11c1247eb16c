"""What git ignores, read without git (`kept.ignore_rules`), against git itself: every
answer is `git check-ignore`'s, in real repositories — random patterns and paths,
and the cases that need care (negation under an ignored directory, `**`, classes,
escapes, CRLF, a byte order mark, trailing blanks, info/exclude, core.excludesFile
through an include, core.ignoreCase). A file that cannot be read is an OSError."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest

from agent_hooks.kept import ignore_rules

ATOMS = [
    "a", "b", "ab", "x.txt", "*.txt", "*", "**", "?", "[ab]", "[!a]", "[a-c]", "[^b]",
    "[[:digit:]]", "[[:alpha:]]*", "[[:bogus:]]", "[a-]", "[]a]", "[", "\\*", "d", ".env",
    "*.log", "c", "**/a", "a/**", "x\\ ", "\\#a", "\\!a", "*a*", "a?", "***",
]  # fmt: skip
NAMES = ["a", "b", "ab", "x.txt", "y.txt", "d", "c", "1", ".env", "k.log", "*", "aa", "#a",
         "!a", "x ", "]", "a-"]  # fmt: skip


def git_env(home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "XDG_CONFIG_HOME": str(home / ".config"),
    }


def checked(repo: Path, paths: list[str], env: dict[str, str]) -> set[str]:
    """The paths git says are ignored (`git check-ignore --no-index`)."""
    out = subprocess.run(
        ["git", "-C", str(repo), "check-ignore", "--no-index", "--stdin"],
        input="\n".join(paths) + "\n",
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert out.returncode in (0, 1), out.stderr
    return set(out.stdout.splitlines())


def ours(repo: Path, paths: list[str], env: dict[str, str]) -> set[str]:
    git = str(repo / ".git")
    return {p for p in paths if ignore_rules.decide(str(repo), git, git, env, p)[0]}


def pattern(r: random.Random) -> str:
    text = "/".join(r.choice(ATOMS) for _ in range(r.randint(1, 4)))
    if r.random() < 0.2:
        text = "/" + text
    if r.random() < 0.2:
        text += "/"
    if r.random() < 0.2:
        text = "!" + text
    if r.random() < 0.05:
        text += "   "
    return text


def make_files(repo: Path, r: random.Random) -> list[str]:
    """Random files (none of them a directory of another), made."""
    paths = sorted({"/".join(r.choice(NAMES) for _ in range(r.randint(1, 4))) for _ in range(30)})
    made = []
    for rel in paths:
        full = repo / rel
        try:
            full.parent.mkdir(parents=True, exist_ok=True)
            if full.is_dir():
                continue
            full.touch()
            made.append(rel)
        except (NotADirectoryError, FileExistsError, IsADirectoryError):
            continue
    return made


@pytest.mark.parametrize("seed", range(40))
def test_random_patterns_are_judged_as_git_judges_them(tmp_path: Path, seed: int) -> None:
    r = random.Random(seed)
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    made = make_files(repo, r)
    sub = next(rel.rpartition("/")[0] for rel in [*made, "a/x"] if "/" in rel)
    texts = {
        ".gitignore": [pattern(r) for _ in range(r.randint(1, 6))],
        f"{sub}/.gitignore": [pattern(r) for _ in range(r.randint(0, 4))],
        ".git/info/exclude": [pattern(r) for _ in range(r.randint(0, 3))],
    }
    for name, lines in texts.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text("\n".join(lines) + "\n")
    made = [rel for rel in made if not rel.endswith(".gitignore")]
    env = git_env(tmp_path / "home")
    assert ours(repo, made, env) == checked(repo, made, env), texts


CASES = [
    # (.gitignore text, files, what is ignored)
    ("build/\n!build/keep.txt\n", ["build/keep.txt", "built.txt"], {"build/keep.txt"}),
    ("*.log\n!important.log\n", ["a.log", "important.log", "d/important.log"], {"a.log"}),
    ("**/gen/*.py\n", ["gen/a.py", "x/y/gen/b.py", "gen/sub/c.py"], {"gen/a.py", "x/y/gen/b.py"}),
    ("docs/**/*.md\n", ["docs/a.md", "docs/x/y/b.md", "a.md"], {"docs/a.md", "docs/x/y/b.md"}),
    ("/top.txt\n", ["top.txt", "d/top.txt"], {"top.txt"}),
    (
        "\ufefffirst\r\nsecond  \r\nthird\\ \n",
        ["first", "second", "third ", "third"],
        {"first", "second", "third "},
    ),
    ("\\#hash\n#comment\n\\!bang\n", ["#hash", "#comment", "!bang"], {"#hash", "!bang"}),
    ("f[[:digit:]][!a-c]\n", ["f1d", "f1a", "fxd"], {"f1d"}),
    (".env*\n", [".env", ".env.local", "env"], {".env", ".env.local"}),
]


@pytest.mark.parametrize(("text", "files", "expected"), CASES)
def test_the_cases_that_need_care(
    tmp_path: Path, text: str, files: list[str], expected: set[str]
) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".gitignore").write_bytes(text.encode())
    for rel in files:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).touch()
    env = git_env(tmp_path / "home")
    assert checked(repo, files, env) == expected  # the case is as git sees it
    assert ours(repo, files, env) == expected


def test_excludes_files_named_by_any_config_file_count(tmp_path: Path) -> None:
    """core.excludesFile in a file the repository's config includes, and git's default
    ~/.config/git/ignore: each one's patterns count — conservative, as git reads only
    the last excludes file set (the default when none is): more is ignored, never less."""
    home = tmp_path / "home"
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "ignore").write_text("*.default\n")
    (home / "more.cfg").write_text('[core]\n\texcludesFile = "~/included.ignore"\n')
    (home / "included.ignore").write_text("*.inc\n")
    with (repo / ".git" / "config").open("a") as config:
        config.write("[include]\n\tpath = ../../home/more.cfg\n")
    files = ["a.default", "b.inc", "c.txt"]
    for rel in files:
        (repo / rel).touch()
    env = git_env(home)
    assert checked(repo, files, env) == {"b.inc"}
    assert ours(repo, files, env) == {"a.default", "b.inc"}
    (home / "more.cfg").unlink()  # now the default counts for git too
    assert checked(repo, files, env) == {"a.default"}
    assert ours(repo, files, env) == {"a.default"}


def test_ignore_case_anywhere_makes_a_case_blind_match_count(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".gitignore").write_text("secret.txt\n")
    env = git_env(tmp_path / "home")
    assert ours(repo, ["SECRET.TXT"], env) == set()
    with (repo / ".git" / "config").open("a") as config:
        config.write("[core]\n\tignorecase = true\n")
    assert ours(repo, ["SECRET.TXT"], env) == {"SECRET.TXT"}


def test_the_sources_read_are_returned_absent_ones_too(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "d").mkdir()
    git = str(repo / ".git")
    answer, sources = ignore_rules.decide(str(repo), git, git, git_env(tmp_path / "h"), "d/f")
    read = dict(sources)
    assert answer is False
    assert read[str(repo / ".gitignore")] is None  # absent: its creation changes the answer
    assert read[str(repo / "d" / ".gitignore")] is None
    assert read[str(repo / ".git" / "config")] is not None


def test_an_ignore_file_that_cannot_be_read_raises(tmp_path: Path) -> None:
    """What it ignores is unknown (the caller takes the file as ignored): a symlink
    loop where `.gitignore` is (even root cannot read it)."""
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".gitignore").symlink_to(".gitignore")
    git = str(repo / ".git")
    with pytest.raises(OSError):
        ignore_rules.decide(str(repo), git, git, git_env(tmp_path / "h"), "a")


def test_matched_walks_directories_and_honours_negation() -> None:
    assert ignore_rules.matched(["secrets/"], "secrets/a/b.txt")
    assert ignore_rules.matched([".env*"], "app/.env.local")
    assert not ignore_rules.matched([".env*", "!.env.example"], ".env.example")
    assert ignore_rules.matched(["dir/", "!dir/f"], "dir/f")  # not out of an ignored directory
