"""What the file commands' handlers (`agent_hooks/shell/file_commands.py`) write, command
by command: cases that pin each rule of their option parsing, found by mutation testing
(docs/mutation-testing.md) and checked against the real tools (GNU tar 1.34, UnZip 6.00,
GNU patch 2.7.6, mawk 1.3.4 and gawk's option parsing, perl 5.36, GNU ed 1.19, vim 9.0,
GNU coreutils 9.1, rsync's host:path rule from its source).
Shaped as tests/unit/shell/test_writes.py's table: (command, targets, opaque reasons),
asserted exactly; cwd /repo, home /home/me."""

from __future__ import annotations

import pytest

from agent_hooks.shell.words import norm
from agent_hooks.shell.writes import BashTarget, analyze

HOME = "/home/me"

CASES: list[tuple[str, list[str], list[str]]] = [
    # ====== tar, unzip (`_archive`)
    # --- unzip: listing (-l), testing (-t), verbose listing (-v), zipinfo (-Z) and piping
    # (-p) extract no file, each alone
    ("unzip -l z.zip", [], []),
    ("unzip -t z.zip", [], []),
    ("unzip -v z.zip", [], []),
    ("unzip -Z z.zip", [], []),
    ("unzip -p z.zip src/a > a.txt", ["/repo/a.txt"], []),
    # -X (restore UID/GID) takes no value: the -d after it is still seen
    ("unzip -X -d dst z.zip", ["/repo/dst"], []),
    # --- tar, old-style bundle as the first word
    ("gunzip -c a.tgz | tar x", [], ["tar -x"]),  # no other word: the archive is stdin
    ('tar xf "$A"', [], ["tar -x"]),  # an unknown archive name after the bundle
    ("tar xfv a.tar -C out", ["/repo/out"], []),  # the bundle's letters after `f`
    # --- tar, long options taking their value from the next word
    ("tar --create --file out.tar src", ["/repo/out.tar"], []),
    ("tar --extract --file a.tar --directory out", ["/repo/out"], []),
    ("tar --get -f a.tar -C out", ["/repo/out"], []),  # --get is --extract
    # a value that begins with a dash is still the value (here a file named `-files.txt`)
    ("tar -cf out.tar --files-from -files.txt", ["/repo/out.tar"], []),
    ("tar -cf out.tar --exclude-from -fx.txt src", ["/repo/out.tar"], []),
    ("tar -cf out.tar --exclude -foo src", ["/repo/out.tar"], []),
    # --- tar, what writes the archive: `-f -` is stdout, no file
    ("tar -czf - src > out.tgz", ["/repo/out.tgz"], []),
    ("tar -rf a.tar new; tar --append -f b.tar new", ["/repo/a.tar", "/repo/b.tar"], []),
    ("tar -uf a.tar src; tar --update -f b.tar src", ["/repo/a.tar", "/repo/b.tar"], []),
    ("tar --delete -f a.tar src/x; tar -Af b.tar more.tar", ["/repo/a.tar", "/repo/b.tar"], []),
    # --- tar's old style: each letter taking a value takes the next word, in order (GNU tar)
    ("tar cfv out.tar src", ["/repo/out.tar"], []),
    ("tar cfb out.tar 20 src", ["/repo/out.tar"], []),
    ("tar xCf out a.tar; tar xfC b.tar out2", ["/repo/out", "/repo/out2"], []),
    # --- the long forms of -A append too
    (
        "tar --concatenate -f a.tar b.tar; tar --catenate -f c.tar d.tar",
        ["/repo/a.tar", "/repo/c.tar"],
        [],
    ),
    # --- each -C is taken from the one before it
    ("tar -xf a.tar -C o -C p", ["/repo/o/p"], []),
    ("tar -xf a.tar -C /abs -C p; tar -x -C o -f b.tar -C ../q", ["/abs/p", "/repo/q"], []),
    # ====== patch, awk (`_patch`, `_awk`)
    # --- patch: long options taking the next word as their value; a value taken for
    # an operand would be named as patch's FILE. Without FILE or -o: all of /repo
    ("patch --directory sub -p1 < fix.diff", ["/repo/sub"], []),
    ("patch --strip 1 --input fix.diff --fuzz 3 --ifdef DEBUG", ["/repo"], []),
    (
        "patch --prefix old/ --suffix .bak --basename-prefix bak. --version-control simple"
        " --get 0 -p1 < fix.diff",
        ["/repo"],
        [],
    ),
    ("patch --quoting-style literal --reject-format unified -p1 < fix.diff", ["/repo"], []),
    ("patch -F 3 -p1 < fix.diff", ["/repo"], []),  # -F takes a value (a capital letter)
    # --output/--reject-file as words of their own; with --output the files the patch
    # names are left alone
    ("patch --output out.c --reject-file out.rej < fix.diff", ["/repo/out.c", "/repo/out.rej"], []),
    ("patch -o - -r - < fix.diff", [], []),  # output to stdout, rejects discarded
    # -d changes directory before anything is opened: -o/-r are relative to it
    (
        "patch -d sub -o out.c -r out.rej < fix.diff",
        ["/repo/sub/out.c", "/repo/sub/out.rej"],
        [],
    ),
    ("patch -d ~/proj -p1 < fix.diff", ["/home/me/proj"], []),
    ('patch -d "$PWD/sub" -p1 < fix.diff', ["/repo/sub"], []),
    # writing nothing: help, version; -C/--check are BSD patch's dry run (GNU patch
    # refuses them)
    ("patch --help; patch --version; patch -v", [], []),
    ("patch -C -p1 < fix.diff; patch --check -p1 < fix.diff", [], []),
    # --- awk: option values are not the program text
    ("awk -F , -v n=1 '{print > \"out\"}' f", [], ["awk program may write"]),
    ("awk --field-separator , --assign n=1 '{print > \"out\"}' f", [], ["awk program may write"]),
    ("awk -F inplace '{print}' f", [], []),  # a field separator, not the inplace library
    # the program given by -e/--source: every operand is a file
    ("gawk -e '{print > \"out\"}' f", [], ["gawk program may write"]),
    ("gawk --source '{print > \"out\"}' f", [], ["gawk program may write"]),
    ("gawk -i inplace -e '{print}' f", ["entry:/repo/f", "/repo/f"], []),
    ("gawk -i inplace --source '{print}' f", ["entry:/repo/f", "/repo/f"], []),
    # ... or read from a file (-f/--file, -E/--exec): unseen, or edited files in place
    ("awk -f prog.awk data", [], ["awk -f"]),
    ("gawk -i inplace --file prog.awk f", ["entry:/repo/f", "/repo/f"], []),
    ("gawk -i inplace --exec prog.awk f", ["entry:/repo/f", "/repo/f"], []),
    ("gawk -i inplace -E prog.awk f", ["entry:/repo/f", "/repo/f"], []),
    # the inplace library by either name and option; another library edits nothing
    ("gawk --load ordchr --include inplace '{print}' f", ["entry:/repo/f", "/repo/f"], []),
    ("gawk -i inplace.awk '{print}' f", ["entry:/repo/f", "/repo/f"], []),
    ("gawk -i ord '{print ord($1)}' f", [], []),  # gawk's own ord.awk: functions only
    # each sign of a write in the program text, alone
    ("awk '{system(\"gzip \" $1)}' list", [], ["awk program may write"]),
    ("awk '{print >\"out\"}' f", [], ["awk program may write"]),
    ("awk '{print |\"sort\"}' f", [], ["awk program may write"]),
    ("awk '{print | \"sort\"}' f", [], ["awk program may write"]),
    ("awk '{print}' 'system(1).log'", [], []),  # only the first operand is the program
    # options end at the first operand, as in every awk: what follows is files
    ("awk '{print > \"o1\"}' af -e 1", [], ["awk program may write"]),
    ("gawk '{print}' f -i inplace", [], []),  # -i and inplace are files to read here
    # ====== ed, ex, vi, vim, perl (`_editor`, `_perl`)
    # --- perl: where its switches end
    # `-` is the script (read from stdin), not a switch
    ("perl -pi - f.txt < fix.pl", ["entry:/repo/f.txt", "/repo/f.txt"], []),
    # no -e: the first operand is the script
    ("perl -pi fix.pl f.txt", ["entry:/repo/f.txt", "/repo/f.txt"], []),
    ("perl -pi -e 's/a/b/' -- -f.txt", ["entry:/repo/-f.txt", "/repo/-f.txt"], []),
    # -e before -i still gives the code: every operand is a file
    ("perl -e 's/a/b/' -pi f.txt", ["entry:/repo/f.txt", "/repo/f.txt"], []),
    # -E is -e too, its code the next word
    ("perl -pi -E 's/a/b/' f.txt", ["entry:/repo/f.txt", "/repo/f.txt"], []),
    # -I's directory is the next word
    ("perl -I lib -pi -e 's/a/b/' f.txt", ["entry:/repo/f.txt", "/repo/f.txt"], []),
    # -X (no warnings) is a flag; -x takes the rest of its word (a directory)
    ("perl -Xpi -e 's/a/b/' f.txt", ["entry:/repo/f.txt", "/repo/f.txt"], []),
    ("perl -Xxbin tool.pl data.txt", [], ["perl tool.pl"]),
    # --- perl: -0[octal|xHEX] and -l[octal] read their digits, then more switches (perl.c)
    ("perl -0777 -pi -e 's/a/b/' f.txt", ["entry:/repo/f.txt", "/repo/f.txt"], []),
    # an upper-case hex digit is no -E
    ("perl -0x1E -pi -e 's/a/b/' f.txt", ["entry:/repo/f.txt", "/repo/f.txt"], []),
    # a hex run that stops before the end of the word is `-0` then `-x` taking the rest
    # (perl 5.36: `perl -0x1pi prog.pl f.txt` edits nothing: "No Perl script found")
    ("perl -0x1pi prog.pl f.txt", [], ["perl prog.pl"]),
    ("perl -0x -pi -e 's/a/b/' f.txt", ["entry:/repo/f.txt", "/repo/f.txt"], []),
    ("perl -0xpi f.txt", [], ["perl f.txt"]),
    # after -l an `e` is -e (not a hex digit), also after an octal digit
    ("perl -le 'print 1'", [], ["perl -e"]),
    ("perl -l0e 'print 1'", [], ["perl -e"]),
    # --- perl: runs that read no code, or read it from stdin
    ("perl -v; perl -V; perl --version; perl -h", [], []),
    ("perl < fix.pl", [], ["perl reads stdin"]),
    # --- ed/red: -p/--prompt take a value; GNU ed edits its first file only; `!cmd`
    # reads a command's output and sets no file name (a bare `w` fails)
    ("ed -p : f.txt", ["entry:/repo/f.txt", "/repo/f.txt"], []),
    ("red --prompt : f.txt", ["entry:/repo/f.txt", "/repo/f.txt"], []),
    ("ed f.txt g.txt", ["entry:/repo/f.txt", "/repo/f.txt"], []),
    ("ed '!cat x'", [], ["ed reads stdin"]),
    # --- ex/vim: -s is silent mode in Ex mode (`ex`, -e, -E), else -s {scriptin};
    # neither --clean nor -n (no e/E among their letters) makes Ex mode
    ("ex -s f.txt", ["entry:/repo/f.txt", "/repo/f.txt"], []),
    ("vim -Es f.txt", ["entry:/repo/f.txt", "/repo/f.txt"], []),
    ("vim -s keys.vim notes.md", ["entry:/repo/notes.md", "/repo/notes.md"], []),
    ("vim --clean -n -s keys.vim notes.md", ["entry:/repo/notes.md", "/repo/notes.md"], []),
    # --- vim: after --, every word is a file, even -x and +x
    (
        "vim -- -notes.md +1",
        ["entry:/repo/-notes.md", "/repo/-notes.md", "entry:/repo/+1", "/repo/+1"],
        [],
    ),
    # --- vim: long options with a value; --startuptime's is a file written, also
    # after the files
    (
        "vim --cmd 'set nu' --servername S --startuptime st.log f.txt; nvim --listen n.sock g",
        ["/repo/st.log", "entry:/repo/f.txt", "/repo/f.txt", "entry:/repo/g", "/repo/g"],
        [],
    ),
    ("vim f.txt --startuptime st.log", ["entry:/repo/f.txt", "/repo/f.txt", "/repo/st.log"], []),
    # --- vim: short options: -X (no X server) a flag; -W {scriptout} overwritten;
    # -w without its file: vim stops ("Argument missing after: -w")
    ("vim -X f.txt", ["entry:/repo/f.txt", "/repo/f.txt"], []),
    ("vim -W out.log f.txt", ["/repo/out.log", "entry:/repo/f.txt", "/repo/f.txt"], []),
    ("vim -w", [], []),
    ("vim -q build.log; vim -S", [], ["vim -q", "vim -S"]),
    # -c, -t, -q take the rest of their word when there is one (vim reads a letter at a time)
    ("vim -es -c'g/x/d|wq' f.txt", ["entry:/repo/f.txt", "/repo/f.txt"], []),
    ("vim -tmain; vim -qerr.log", [], ["vim -t", "vim -q"]),
    # -i's viminfo file is written on exit (but NONE); -V's log, after the level, is written
    ("vim -i my.viminfo f", ["/repo/my.viminfo", "entry:/repo/f", "/repo/f"], []),
    ("vim -i NONE f", ["entry:/repo/f", "/repo/f"], []),
    (
        "vim -V9v.log f; vim -V9 g",
        ["/repo/v.log", "entry:/repo/f", "/repo/f", "entry:/repo/g", "/repo/g"],
        [],
    ),
    # -S followed by an option sources Session.vim; -s then reads keys.vim
    ("vim -S -s keys.vim notes.md", ["entry:/repo/notes.md", "/repo/notes.md"], ["vim -S"]),
    # ====== cp, mv, install, rsync, scp, ln (`_copy`)
    # --- long options taking the next word as their value: not an operand
    ("cp --target-directory out a b", ["/repo/out"], []),
    # --- rsync/scp: the destination is the last operand, local unless it has a `:`
    # before its first `/`; an unknown word is no host
    ('rsync a "$X" host:dst', [], []),
    ("rsync -a src dir/x:y/z", ["entry:/repo/dir/x:y/z", "/repo/dir/x:y/z"], []),
    # rsync may replace the destination's name or write into it; the last operand of three
    ("rsync -a a b dst", ["entry:/repo/dst", "/repo/dst"], []),
    # --- install --directory makes each operand, as -d does
    ("install --directory d1 d2", ["/repo/d1", "/repo/d2"], []),
    # --- two sources and a destination: the destination is a directory written into
    ("cp a b dst", ["/repo/dst"], []),
    # --- one operand: cp and mv fail (missing destination); ln -s makes ./NAME, none
    # for `..` (`./..` exists), an unknown one for an unknown word
    ("cp a; mv b", [], []),
    ("ln -s ..", [], []),
    ('ln -s "$X"', [], ["variable in target $X"]),
    # --- the long forms of -T and ln's -n: the name itself is replaced
    ("mv --no-target-directory a b", ["entry:/repo/a", "entry:/repo/b"], []),
    ("ln -f --no-dereference a d", ["entry:/repo/d"], []),
    # --- a hard link is no symlink: later paths are not followed through it
    ("ln t d; touch d/c", ["entry:/repo/d", "/repo/d", "/repo/d/c"], []),
    # --- ln --symbolic is ln -s: later paths through the link lead to its target
    ("ln --symbolic /x/t d; touch d/c", ["entry:/repo/d", "/repo/d", "/repo/d/c", "/x/t/c"], []),
    # --- ln -s into a directory makes DIR/NAME only, not the directory itself
    ("ln -st dir /x/a; touch dir/c", ["/repo/dir", "/repo/dir/c"], []),
    # ====== rm, rmdir, unlink, tee, shred, touch, mkdir, truncate (`_operands`)
    # --- long options taking the next word as their value
    ("touch --reference ref f; mkdir --mode 700 d", ["/repo/f", "/repo/d"], []),
    # --- the long forms of shred -u (overwritten through a symlink, then the name
    # removed) and touch -h (the symlink itself)
    ("shred --remove f", ["entry:/repo/f", "/repo/f"], []),
    ("touch --no-dereference l", ["entry:/repo/l"], []),
    # ====== chmod, chown, chgrp (`_modes`)
    # --- --reference and --from take the next word as their value
    ("chmod --reference ref f", ["/repo/f"], []),
    ("chown --from root:root me f", ["/repo/f"], []),
]


def _show(command: str) -> tuple[list[str], list[str]]:
    res = analyze(command, "/repo", HOME)
    for t in res.targets:
        assert isinstance(t, BashTarget) and t.path.startswith("/") and norm(t.path) == t.path
    return [("glob:" if t.glob else "entry:" if t.entry else "") + t.path for t in res.targets], (
        res.opaque
    )


@pytest.mark.parametrize(("command", "targets", "opaque"), CASES, ids=[c[0][:40] for c in CASES])
def test_case(command: str, targets: list[str], opaque: list[str]) -> None:
    assert _show(command) == (targets, opaque)
