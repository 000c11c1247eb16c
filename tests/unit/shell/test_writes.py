"""shell.writes: which files a Bash command would write (table-driven).

Each case is (command, targets, opaque reasons), all asserted exactly. Targets are
absolute paths; a glob target is written "glob:<pattern>", a directory entry (a
symlink there is not followed) "entry:<path>". cwd is /repo, home /home/me.
"""

from __future__ import annotations

import posixpath
import shlex
import subprocess
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_hooks.shell.words import norm
from agent_hooks.shell.writes import BashTarget, analyze
from hook_runner import ROOT

SRC = str(ROOT / "src")
HOME = "/home/me"

CASES: list[tuple[str, list[str], list[str]]] = [
    # --- redirections
    ("echo hi > src/x.py", ["/repo/src/x.py"], []),
    ("echo hi>src/x.py", ["/repo/src/x.py"], []),
    ("echo hi >> log.txt; echo a >| clobber", ["/repo/log.txt", "/repo/clobber"], []),
    ("make_it &>all.log", ["/repo/all.log"], []),
    ("cmd &>> all.log 2>err.log 3>> three", ["/repo/all.log", "/repo/err.log", "/repo/three"], []),
    ("cat <> rw.txt", ["/repo/rw.txt"], []),
    ("cmd >& out.log", ["/repo/out.log"], []),
    ("> empty", ["/repo/empty"], []),
    ("echo >&2; cmd 2>&1 >/dev/null; cmd >&-; cmd 3>&1-", [], []),
    ("cmd >/dev/stderr 2>/dev/tty 3>/dev/fd/3 4>/dev/stdout", [], []),
    ("sort < in.txt; cat <<< 'x > y'", [], []),
    ("echo hi >", [], ["redirection without target"]),
    # --- quoting, comments, escapes
    ('echo "a > b"', [], []),
    ("echo a \\> b", [], []),
    ("echo 'x' > 'my file.txt'", ["/repo/my file.txt"], []),
    ("touch a\\ b", ["/repo/a b"], []),
    ('echo hi > "src/*.py"', ["/repo/src/*.py"], []),
    ("echo ok # > not-a-target", [], []),
    ("echo a#b > hash", ["/repo/hash"], []),
    ("echo a \\\n  > continued", ["/repo/continued"], []),
    ("echo x > $'a\\tb'", ["/repo/a\tb"], []),
    # --- targets that cannot be seen
    ('ls > "$OUT"', [], ["variable in target $OUT"]),
    ("echo > ${DIR}/x", [], ["variable in target ${DIR}"]),
    ("echo > $(mktemp)", [], ["command substitution in target $(...)"]),
    ("touch ~bob/x", [], ["tilde in target ~bob/x"]),
    ("touch '~/x'", ["/repo/~/x"], []),
    # --- ~, $HOME, normalisation, globs, braces, dedup
    ("touch ~/x ${HOME}/y $HOME/z ~", ["/home/me/x", "/home/me/y", "/home/me/z", "/home/me"], []),
    ("rm ../x ./a/../b //c", ["entry:/x", "entry:/repo/b", "entry:/c"], []),
    ("sed -i 's/a/b/' src/*.py", ["glob:/repo/src/*.py"], []),
    (
        "rm src/[ab].py 'q[1]' x?",
        ["glob:/repo/src/[ab].py", "entry:/repo/q[1]", "glob:/repo/x?"],
        [],
    ),
    ("rm src/'*'x*.py", ["glob:/repo/src/[*]x*.py"], []),
    ("touch f{1..3} g{a,b}", ["/repo/f1", "/repo/f2", "/repo/f3", "/repo/ga", "/repo/gb"], []),
    ("mkdir -p a/{b,c}/d '{x,y}'", ["/repo/a/b/d", "/repo/a/c/d", "/repo/{x,y}"], []),
    ("cp x{,.bak}", ["entry:/repo/x.bak", "/repo/x.bak"], []),
    ("touch a a; echo > a; rm ./a", ["/repo/a", "entry:/repo/a"], []),
    # --- the current directory: $PWD, ${PWD}, $(pwd), `pwd` (issue 18, defect 12)
    ('echo x > "$PWD/src/app.py"', ["/repo/src/app.py"], []),
    (
        'echo x > ${PWD}/a; touch "$(pwd)/b" `pwd`/c $PWD',
        ["/repo/a", "/repo/b", "/repo/c", "/repo"],
        [],
    ),
    ('touch "$( pwd -P )/x" "`pwd -L`/y"', ["/repo/x", "/repo/y"], []),
    (
        'cd src && echo > "$PWD/y.py"; cd "$PWD/../lib" && touch z',
        ["/repo/src/y.py", "/repo/lib/z"],
        [],
    ),
    ('(cd src; touch "$PWD/a"); touch "$PWD/b"', ["/repo/src/a", "/repo/b"], []),
    ('rm "$PWD"/*.o', ["glob:/repo/*.o"], []),
    (
        'ln -s "$PWD/held" l && echo > l/f',
        ["entry:/repo/l", "/repo/l", "/repo/l/f", "/repo/held/f"],
        [],
    ),
    ("dd if=x of=$PWD/out", ["/repo/out"], []),
    ('split -l 1 in "$PWD/part-"', ["glob:/repo/part-*"], []),
    ("bash -c 'cd src && echo > \"$PWD/n\"'", ["/repo/src/n"], []),
    (
        'cd "$D" && touch "$PWD/x" "$(pwd)/y"',
        [],
        ["variable in target $PWD", "command substitution in target $(...)"],
    ),
    ('PWD=/tmp; touch "$PWD/x"', [], ["variable in target $PWD"]),
    (
        'touch "$PWD/$X" "$(pwd; rm y)/z"',
        ["entry:/repo/y"],
        ["variable in target $X", "command substitution in target $(...)"],
    ),
    # --- control operators and cd
    ("cd src && echo > y.py", ["/repo/src/y.py"], []),
    ("(cd src; touch a) && touch b", ["/repo/src/a", "/repo/b"], []),
    ("cd src; cd ..; touch c", ["/repo/c"], []),
    ("cd /tmp || exit 1; rm -f x", ["entry:/tmp/x"], []),
    ('cd -- "my dir" && touch f', ["/repo/my dir/f"], []),
    ("cd && touch h", ["/home/me/h"], []),
    ("cd ~/proj\ntouch x", ["/home/me/proj/x"], []),
    ('cd "$D" && touch a && touch /abs/b', ["/abs/b"], ["relative target a after cd $D"]),
    ("cd x | cat; touch r", ["/repo/r"], []),
    ("cd a && { cd b; touch c; } && touch d", ["/repo/a/b/c", "/repo/a/b/d"], []),
    ("pushd lib && touch p && popd && touch q", ["/repo/lib/p", "/repo/q"], []),
    ("cd a; cd b; cd -; touch m", ["/repo/a/m"], []),
    ("touch a & touch b", ["/repo/a", "/repo/b"], []),
    # --- substitutions, subshells, bash -c
    ("echo $(touch q)", ["/repo/q"], []),
    ('echo "$(rm -f "in q")"', ["entry:/repo/in q"], []),
    ("echo `touch bt`", ["/repo/bt"], []),
    ("x=$(cd sub && touch s) && touch t", ["/repo/sub/s", "/repo/t"], []),
    ("echo $((1 > 2)); (( x > 5 )) && echo ok", [], []),
    ("diff <(sort a) <(tee copy < b)", ["/repo/copy"], []),
    ("echo 2>(tee out) 3> x", ["/repo/out", "/repo/x"], []),
    ('bash -c "echo > z"', ["/repo/z"], []),
    ("sh -c 'cd sub && rm -r build'; touch top", ["entry:/repo/sub/build", "/repo/top"], []),
    ("cd sub && zsh -c 'touch z'", ["/repo/sub/z"], []),
    ('bash -lc "$CMD"', [], ["bash -c $CMD", "command $CMD"]),
    ("eval 'echo > ev'", ["/repo/ev"], []),
    ('eval "$X"', [], ["eval", "command $X"]),
    # --- here-docs
    (
        "cat <<EOF > out.txt\n> notatarget\nrm -rf /\nEOF\ntouch after",
        ["/repo/out.txt", "/repo/after"],
        [],
    ),
    ("cat <<-'EOF'\n\t> no\n\tEOF\necho done > d", ["/repo/d"], []),
    ("cat <<EOF\n$(touch inbody)\nEOF", ["/repo/inbody"], []),
    ("cat <<'EOF'\n$(touch no)\nEOF", [], []),
    ("python3 <<EOF\nopen('x', 'w')\nEOF", [], ["python3 reads stdin"]),
    # --- file commands
    ("cat a | tee -a log/out.txt >/dev/null", ["/repo/log/out.txt"], []),
    ("tee x y < in", ["/repo/x", "/repo/y"], []),
    ("cp a b", ["entry:/repo/b", "/repo/b"], []),
    ("cp -r a b/", ["/repo/b"], []),
    ("cp -t dest a b; cp --target-directory=d2 c", ["/repo/dest", "/repo/d2"], []),
    ("cp -T a b", ["entry:/repo/b", "/repo/b"], []),  # through a symlink at b, as cp does
    ("mv -T a b; install -T a c", ["entry:/repo/a", "entry:/repo/b", "entry:/repo/c"], []),
    (
        "install -d d1 d2; install -m 644 a /usr/local/bin/a",
        ["/repo/d1", "/repo/d2", "entry:/usr/local/bin/a", "/usr/local/bin/a"],
        [],
    ),
    ("mv a b", ["entry:/repo/a", "entry:/repo/b", "/repo/b"], []),
    ("mv -t dir a b", ["entry:/repo/a", "entry:/repo/b", "/repo/dir"], []),
    ("rm -rf build", ["entry:/repo/build"], []),
    ("rm -- -weird", ["entry:/repo/-weird"], []),
    (
        "rmdir d; unlink u; shred -u -n 3 s",
        ["entry:/repo/d", "entry:/repo/u", "entry:/repo/s", "/repo/s"],
        [],
    ),
    ("touch -d yesterday t; mkdir -m 700 m", ["/repo/t", "/repo/m"], []),
    ("truncate -s 0 tr; truncate --size=0 tr2", ["/repo/tr", "/repo/tr2"], []),
    ("ln -s target link", ["entry:/repo/link", "/repo/link"], []),
    ("ln -s /x/y/zz", ["entry:/repo/zz"], []),
    ("ln -sf -t bin ../a ../b", ["/repo/bin"], []),
    ("dd if=a of=b bs=1M", ["/repo/b"], []),
    ("chmod +x run.sh && chown me f", ["/repo/run.sh", "/repo/f"], []),
    (
        "sort -o sorted.txt in; curl -sSLo out.bin https://x; wget -O w.html u",
        ["/repo/sorted.txt", "/repo/out.bin", "/repo/w.html"],
        [],
    ),
    (
        "tar xzf a.tgz -C out; tar -czf b.tgz src; tar -xf c.tar",
        ["/repo/out", "/repo/b.tgz"],
        ["tar -x"],
    ),
    ("unzip -d dst z.zip; unzip -l z.zip; unzip z.zip", ["/repo/dst"], ["unzip"]),
    (
        "rsync -a --exclude .git src/ backup/; rsync -av a host:/x; scp h:/f local",
        ["/repo/backup", "/repo/local"],
        [],
    ),
    (
        "touch {} a{}b{x,y}; rm -rf {build,dist}/",
        ["/repo/{}", "/repo/a{}bx", "/repo/a{}by", "/repo/build", "/repo/dist"],
        [],
    ),
    # --- sed, perl, awk
    ("sed 's/a/b/' f", [], []),
    (
        "sed -i.bak -e s/a/b/ -e s/c/d/ f g",
        ["entry:/repo/f", "/repo/f", "entry:/repo/g", "/repo/g"],
        [],
    ),
    ("sed -ni 's/a/b/p' h", ["entry:/repo/h", "/repo/h"], []),
    ("sed --in-place=.orig 's/x/y/' k", ["entry:/repo/k", "/repo/k"], []),
    ("sed -E -i -f script.sed m", ["entry:/repo/m", "/repo/m"], []),
    (
        "perl -pi -e 's/a/b/' f1 f2",
        ["entry:/repo/f1", "/repo/f1", "entry:/repo/f2", "/repo/f2"],
        [],
    ),
    ("perl -i.bak -pe s/a/b/ g", ["entry:/repo/g", "/repo/g"], []),
    ("perl -ne 'print' f", [], ["perl -e"]),
    ("perl script.pl", [], ["perl script.pl"]),
    ("gawk -i inplace '{print}' aw", ["entry:/repo/aw", "/repo/aw"], []),
    ("awk '{print $1}' f", [], []),
    ("awk '{print > \"out\"}' f", [], ["awk program may write"]),
    # --- git
    ("git checkout -- src/a.py", ["entry:/repo/src/a.py"], []),
    ("git checkout main -- a b", ["entry:/repo/a", "entry:/repo/b"], []),
    ("git checkout .", ["/repo"], []),
    ("git checkout main", [], ["git checkout main"]),
    ("git checkout -b feature", [], []),
    ("git restore src/a.py", ["entry:/repo/src/a.py"], []),
    ("git restore --staged x", [], []),
    ("git restore --staged --worktree x", ["entry:/repo/x"], []),
    ("git rm --cached x", [], []),
    ("git rm -r old", ["entry:/repo/old"], []),
    ("git mv a b", ["entry:/repo/a", "entry:/repo/b"], []),
    ("git -C sub checkout -- a", ["entry:/repo/sub/a"], []),
    ("git checkout -- '*.py'", ["glob:/repo/**/*.py"], []),  # git's `*` matches across `/`
    ("git reset --hard HEAD~1", [], ["git reset --hard"]),
    ("git reset HEAD file; git status; git diff > d.patch", ["/repo/d.patch"], []),
    ("git clean -fd; git clean -n", [], ["git clean"]),
    ("git stash; git stash list", [], ["git stash"]),
    ("git pull --rebase", [], ["git pull"]),
    ("git switch -c new; git switch main", [], ["git switch main"]),
    ("git worktree add ../wt -b x", ["/wt"], []),
    # --- wrappers
    ("sudo -u root tee /etc/x", ["/etc/x"], []),
    ("env -i A=1 B=2 touch e", ["/repo/e"], []),
    ("env -C sub touch x", ["/repo/sub/x"], []),
    ("command rm c; builtin echo > b; command -v rm", ["entry:/repo/c", "/repo/b"], []),
    ("exec > log 2>&1", ["/repo/log"], []),
    ("nohup rm x & time rm t", ["entry:/repo/x", "entry:/repo/t"], []),
    (
        "nice -n 5 rm n; timeout -s KILL 5 touch t; stdbuf -oL tee o",
        ["entry:/repo/n", "/repo/t", "/repo/o"],
        [],
    ),
    ("A=1 B=2 touch x; C=3", ["/repo/x"], []),
    ("/bin/rm -f a", ["entry:/repo/a"], []),
    (
        "uv run python -c 1; poetry run ./x.sh; uv run --with x pytest",
        [],
        ["python -c", "script ./x.sh"],
    ),
    ("sudo -C 3 -D /srv touch x; sudo -s", ["/srv/x"], []),
    ("xargs rm", [], ["xargs rm"]),
    ("find . -name '*.pyc' | xargs -I{} mv {} /tmp/", ["/tmp"], ["xargs mv"]),
    ("xargs grep foo", [], []),
    ("find . -name x -exec rm {} \\;", ["/repo"], []),
    ("find . -delete", ["/repo"], []),
    ("find . -exec grep -l x {} +", [], []),
    # --- opaque runners
    ('python -c \'open("x","w")\'', [], ["python -c"]),
    ("python3 -m pytest -q", [], ["python3 -m pytest"]),
    ("node build.js", [], ["node build.js"]),
    ("python --version", [], []),
    ("make; make -n", [], ["make"]),
    ("npm run build; npm ls", [], ["npm run build"]),
    ("./x.sh", [], ["script ./x.sh"]),
    ("bash script.sh", [], ["script script.sh"]),
    ("curl -s https://x | bash", [], ["bash reads stdin"]),
    ("source env.sh; . ./other.sh", [], ["source env.sh", "source ./other.sh"]),
    ("$EDITOR f", [], ["command $EDITOR"]),
    # --- directory entries: the name itself, not where a symlink there points
    ("rm src/out/ src/*", ["/repo/src/out", "glob:/repo/src/*"], []),
    ("mv -T a b; ln -sfn /tmp cur", ["entry:/repo/a", "entry:/repo/b", "entry:/repo/cur"], []),
    ("shred -n 1 f; touch -h l", ["/repo/f", "entry:/repo/l"], []),
    ("sed -i --follow-symlinks s/a/b/ f", ["/repo/f"], []),
    # --- symlinks made earlier in the command are followed
    (
        "ln -s ../held s2 && echo x > s2/f",
        ["entry:/repo/s2", "/repo/s2", "/repo/s2/f", "/held/f"],
        [],
    ),
    (
        "ln -s /w l; cd l && rm -r *.o",
        ["entry:/repo/l", "/repo/l", "glob:/repo/l/*.o", "glob:/w/*.o"],
        [],
    ),
    (
        'ln -s "$X" l; echo > l/x',
        ["entry:/repo/l", "/repo/l", "/repo/l/x"],
        ["target through a symlink to an unknown place: /repo/l/x"],
    ),
    (
        "ln -s a b && ln -s b a && rm a/f",
        [
            "entry:/repo/b",
            "/repo/b",
            "entry:/repo/a",
            "/repo/a",
            "entry:/repo/a/f",
            "entry:/repo/b/f",
        ],
        [],
    ),
    # --- find
    ("find src -name '*.pyc' -delete", ["entry:/repo/src"], []),
    ("find -L a b -delete", ["entry:/repo/a", "/repo/a", "entry:/repo/b", "/repo/b"], []),
    ("find src lib -type f -exec sed -i s/a/b/ {} +", ["entry:/repo/src", "entry:/repo/lib"], []),
    ("find src -exec cp {} /tmp/ \\;", ["/tmp"], ["find -exec cp"]),
    ("find . -exec sh -c 'rm \"$1\"' _ {} \\;", [], ["find -exec sh"]),
    ('find "$D" -delete', [], ["variable in target $D"]),
    # --- patch: its file, -o/-r, else everything under where it runs
    ("patch -p1 < fix.diff", ["/repo"], []),
    ("patch -p1 -d sub < x.diff; patch --dry-run -p1 < y.diff", ["/repo/sub"], []),
    (
        "patch src/a.py fix.diff; patch -o out.py b.py < d",
        ["entry:/repo/src/a.py", "/repo/src/a.py", "/repo/out.py"],
        [],
    ),
    ("patch -r rej.txt -p0 < d", ["/repo/rej.txt", "/repo"], []),
    # --- apply_patch (Codex's patch tool on its PATH): the files the patch names
    (
        "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: sh_patch.txt\n@@\n-old\n"
        "+new via shell heredoc\n*** End Patch\nEOF\n",
        ["/repo/sh_patch.txt"],
        [],
    ),
    (
        "cd sub && apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: ../up.txt\n+x\n"
        "*** Delete File: gone.txt\n*** End Patch\nEOF",
        ["/repo/up.txt", "entry:/repo/sub/gone.txt", "/repo/sub/gone.txt"],
        [],
    ),
    (
        "applypatch <<'P'\n*** Begin Patch\n*** Update File: k.txt\n*** Move to: /abs/n.txt\n"
        "@@\n-a\n+b\n*** End Patch\nP",
        ["entry:/repo/k.txt", "/repo/k.txt", "/abs/n.txt"],
        [],
    ),
    (
        "apply_patch '*** Begin Patch\n*** Add File: a b*.txt\n+x\n*** End Patch'",
        ["/repo/a b*.txt"],
        [],
    ),
    (
        "apply_patch <<< '*** Begin Patch\n*** Add File: ~/hs.txt\n+x\n*** End Patch'",
        ["/repo/~/hs.txt"],
        [],
    ),
    (
        "apply_patch <<-'EOF'\n\t*** Begin Patch\n\t*** Add File: tabs.txt\n\t+x\n\t*** End Patch\n\tEOF",
        ["/repo/tabs.txt"],
        [],
    ),
    (  # bash joins backslash-newline in an unquoted here-doc: the header it makes counts
        "apply_patch <<EOF\n*** Begin Patch\n**\\\n* Add File: joined.txt\n+x\n*** End Patch\nEOF",
        ["/repo/joined.txt"],
        [],
    ),
    (  # hunk content is not a header
        "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a.txt\n+*** Add File: evil.txt\n"
        "*** End Patch\nEOF",
        ["/repo/a.txt"],
        [],
    ),
    (
        "apply_patch <<'EOF' && echo > after.txt\n*** Begin Patch\n*** Add File: first.txt\n+x\n"
        "*** End Patch\nEOF",
        ["/repo/first.txt", "/repo/after.txt"],
        [],
    ),
    (
        "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a.txt\n+x\n*** Move to: m\n"
        "*** End Patch\nEOF",
        ["/repo/a.txt"],
        ["apply_patch: '*** Move to: m' is not a valid hunk header"],
    ),
    (
        "apply_patch <<'EOF'\nEOF",
        [],
        ["apply_patch: the first line of the patch is not '*** Begin Patch'"],
    ),
    # --- editors
    ("ed -s f.txt < cmds; ed", ["entry:/repo/f.txt", "/repo/f.txt"], ["ed reads stdin"]),
    ("vim -es -c '%s/a/b/' -c wq f.py", ["entry:/repo/f.py", "/repo/f.py"], []),
    ("ex -sc wq a +3 b", ["entry:/repo/a", "/repo/a", "entry:/repo/b", "/repo/b"], []),
    ("vi -es -s x < script", ["entry:/repo/x", "/repo/x"], []),
    (
        "vim -S s.vim x; nvim -w keys.log -u NONE y",
        ["entry:/repo/x", "/repo/x", "/repo/keys.log", "entry:/repo/y", "/repo/y"],
        ["vim -S"],
    ),
    ("vim +wq -T xterm -u NONE f; vim -t main", ["entry:/repo/f", "/repo/f"], ["vim -t"]),
    # --- modes and owners
    (
        "chmod -R 755 src; chmod -w f; chmod --reference=r g",
        ["/repo/src", "/repo/f", "/repo/g"],
        [],
    ),
    (
        "chown -h me l; chgrp -R staff d; chown --from=a:b c:d e",
        ["entry:/repo/l", "/repo/d", "/repo/e"],
        [],
    ),
    # --- zip, split, uniq, sqlite3
    (
        "zip -r out src; zip -x '*.o' -r s.zip src",
        [
            "entry:/repo/out",
            "/repo/out",
            "entry:/repo/out.zip",
            "/repo/out.zip",
            "entry:/repo/s.zip",
            "/repo/s.zip",
        ],
        [],
    ),
    (
        "zip -m m.zip x y; zip -O new.zip old.zip f",
        [
            "entry:/repo/m.zip",
            "/repo/m.zip",
            "entry:/repo/x",
            "entry:/repo/y",
            "entry:/repo/new.zip",
            "/repo/new.zip",
        ],
        [],
    ),
    (
        "split -l 100 big.txt parts/p-; split f; csplit -f out/s f /x/",
        ["glob:/repo/parts/p-*", "glob:/repo/x*", "glob:/repo/out/s*"],
        [],
    ),
    ("split --filter='gzip > $FILE.gz' f", [], ["split --filter"]),
    ("uniq a b; uniq -c a; uniq -f 1 c -", ["/repo/b"], []),
    (
        "sqlite3 db.sqlite 'insert into t values (1)'; sqlite3 -readonly r.db .dump; sqlite3 :memory:",
        ["/repo/db.sqlite"],
        [],
    ),
    ("sqlite3 -cmd '.mode csv' x.db", ["/repo/x.db"], []),
    # --- shell grammar
    ("if true; then touch i; fi > log", ["/repo/i", "/repo/log"], []),
    ('for f in *.py; do sed -i s/a/b/ "$f"; done', [], ["variable in target $f"]),
    ('while read l; do echo "$l"; done < in > out', ["/repo/out"], []),
    (
        "case $x in a) touch a;; (b|c) rm b;; esac; touch z",
        ["/repo/a", "entry:/repo/b", "/repo/z"],
        [],
    ),
    ("[[ a > b ]] && echo", [], []),
    (
        "echo $(case $x in a) touch in1;; (b) rm in2;; esac) > out",
        ["/repo/in1", "entry:/repo/in2", "/repo/out"],
        [],
    ),
    ("f() { echo > fn; }; function g { rm gone; }", ["/repo/fn", "entry:/repo/gone"], []),
    # the head of a compound command: its words' substitutions run, and what follows it
    # (after `in`, `do`, `]]`) is read as commands again
    ("case $(touch cw) in esac", ["/repo/cw"], []),
    ("case x in esac; touch after", ["/repo/after"], []),
    ("case x in cd) touch y;; esac", ["/repo/y"], []),  # a pattern, not `cd`
    ("case", [], []),
    ("case x", [], []),
    ("for x in $(touch f1) $(touch f2); do :; done", ["/repo/f1", "/repo/f2"], []),
    ("for x do touch fordo; done", ["/repo/fordo"], []),
    ("for x in a b", [], []),
    ("select s do touch seldo; done", ["/repo/seldo"], []),
    ("select s in $(touch sel); do break; done", ["/repo/sel"], []),
    ("[[ $(touch t1) == x ]] && touch t2", ["/repo/t1", "/repo/t2"], []),
    ("[[ -f a ]] && touch after", ["/repo/after"], []),
    ("[[ $x == touch ]] && echo", [], []),  # `touch` is an operand there
    ("function f (", [], []),
    ("function f", [], []),
    # --- options of the commonest writers, long forms and values (mutation testing)
    (
        "sed -i --expression=s/a/b/ f1 f2",
        ["entry:/repo/f1", "/repo/f1", "entry:/repo/f2", "/repo/f2"],
        [],
    ),
    ("sed -i --expression s/a/b/ f1", ["entry:/repo/f1", "/repo/f1"], []),
    ("sed -i --file script.sed f1", ["entry:/repo/f1", "/repo/f1"], []),
    ("sed -i --line-length 80 s/a/b/ f1", ["entry:/repo/f1", "/repo/f1"], []),
    ("sed -i -l 80 s/a/b/ f1", ["entry:/repo/f1", "/repo/f1"], []),
    ("sed -i.bak s/a/b/ f1", ["entry:/repo/f1", "/repo/f1"], []),
    (
        "sort -o - in; sort --output=out2 in; sort --output out3 in",
        ["/repo/out2", "/repo/out3"],
        [],
    ),
    ("sqlite3 -bail x.db; sqlite3 -bail; sqlite3 '' q", ["/repo/x.db"], []),
    ("sqlite3 -bail -cmd .x y.db", ["/repo/y.db"], []),
    ("ln -s a $x", [], ["variable in target $x"]),
    # zip's options: patterns up to the next option, the output file, the log file, move
    ('zip -i "*.py" "*.c" -r a.zip src', ["entry:/repo/a.zip", "/repo/a.zip"], []),
    (
        "zip --exclude x y -r a.zip src; zip --include x -r a.zip src",
        ["entry:/repo/a.zip", "/repo/a.zip"],
        [],
    ),
    ("zip -x x; zip -O; zip - f; zip a.zip f -lf", ["entry:/repo/a.zip", "/repo/a.zip"], []),
    (
        "zip old.zip f -O new.zip; zip old.zip f --output-file n2.zip",
        ["entry:/repo/new.zip", "/repo/new.zip", "entry:/repo/n2.zip", "/repo/n2.zip"],
        [],
    ),
    ("zip -m old.zip -O new.zip f", ["entry:/repo/new.zip", "/repo/new.zip", "entry:/repo/f"], []),
    (
        "zip a.zip f -lf log.txt --logfile-path log2.txt",
        ["/repo/log.txt", "/repo/log2.txt", "entry:/repo/a.zip", "/repo/a.zip"],
        [],
    ),
    (
        "zip -lf l3 -m a.zip g",
        ["/repo/l3", "entry:/repo/a.zip", "/repo/a.zip", "entry:/repo/g"],
        [],
    ),
    ("zip -n .png -m a.zip g", ["entry:/repo/a.zip", "/repo/a.zip", "entry:/repo/g"], []),
    (
        "zip --move a.zip h; zip --must-match b.zip f",
        ["entry:/repo/a.zip", "/repo/a.zip", "entry:/repo/h", "entry:/repo/b.zip", "/repo/b.zip"],
        [],
    ),
    (
        "zip d.x/arch f",
        [
            "entry:/repo/d.x/arch",
            "/repo/d.x/arch",
            "entry:/repo/d.x/arch.zip",
            "/repo/d.x/arch.zip",
        ],
        [],
    ),
    # split's and csplit's options that take a value, and their default prefixes
    (
        "split --suffix-length 3 in p1; split --bytes 1M in p2; split --line-bytes 1M in p3; "
        "split --lines 10 in p4; split --number 2 in p5; split --separator , in p6; "
        "split --additional-suffix .txt in p7; split -C 1M in p8",
        [f"glob:/repo/p{k}*" for k in range(1, 9)],
        [],
    ),
    (
        "split in; csplit in 5; csplit --prefix part in 10",
        ["glob:/repo/x*", "glob:/repo/xx*", "glob:/repo/part*"],
        [],
    ),
    # chmod, chown: `--`, `-` as an operand, the long options
    ("chmod 644 -- -f; chown - g", ["/repo/-f", "/repo/g"], []),
    (
        "chown --no-dereference me l1; chown --reference=r --no-dereference l2",
        ["entry:/repo/l1", "entry:/repo/l2"],
        [],
    ),
    (
        "ln -s a dir; echo hi > dir/a",
        ["entry:/repo/dir", "/repo/dir", "/repo/dir/a", "/repo/a/a"],
        [],
    ),
    # a link `ln -s` makes, and a write through it: into the directory, or at the name
    (
        "ln -s /w/real/name.txt dir; echo hi > dir/name.txt",
        [
            "entry:/repo/dir",
            "/repo/dir",
            "/repo/dir/name.txt",
            "/w/real/name.txt/name.txt",
            "/w/real/name.txt",
        ],
        [],
    ),
    (
        "ln -sT /w/real/name.txt dir; echo hi > dir/name.txt",
        ["entry:/repo/dir", "/repo/dir/name.txt", "/w/real/name.txt/name.txt"],
        [],
    ),
    (
        "ln -s /w/a/ dir/; echo hi > dir/a",
        ["/repo/dir", "/repo/dir/a", "/w/a/a", "/w/a"],
        [],
    ),
    (
        "ln -s $x dir; echo hi > dir/name.txt",
        ["entry:/repo/dir", "/repo/dir", "/repo/dir/name.txt"],
        ["target through a symlink to an unknown place: /repo/dir/name.txt"],
    ),
    # --- garbage
    ("echo 'unbalanced", [], ["unterminated quote"]),
    ('touch ok; echo "abc > x', ["/repo/ok"], ["unterminated quote"]),
    ("touch ok; echo $(rm y", ["/repo/ok", "entry:/repo/y"], ["unterminated $("]),
    ("echo `touch z", ["/repo/z"], ["unterminated backtick"]),
    (")) ;; & | ( {", [], []),
]


def _show(command: str, home: str | None = HOME) -> tuple[list[str], list[str]]:
    res = analyze(command, "/repo", home)
    for t in res.targets:
        assert isinstance(t, BashTarget) and t.path.startswith("/") and norm(t.path) == t.path
    return [("glob:" if t.glob else "entry:" if t.entry else "") + t.path for t in res.targets], (
        res.opaque
    )


@pytest.mark.parametrize(("command", "targets", "opaque"), CASES, ids=[c[0][:40] for c in CASES])
def test_case(command: str, targets: list[str], opaque: list[str]) -> None:
    assert _show(command) == (targets, opaque)


def test_without_home() -> None:
    assert _show("touch ~/x; echo > $HOME/y", None) == (
        [],
        ["tilde in target ~/x", "variable in target $HOME"],
    )
    assert _show("cd; touch h", None) == ([], ["relative target h after cd ~"])


def test_the_current_directory_split_or_globbed_by_the_shell() -> None:
    """Unquoted, a cwd holding blanks is several words (opaque); quoted it is one; its
    glob characters are taken literally (the directory matches itself)."""
    res = analyze('touch $PWD/a "$PWD/b"', "/my repo", HOME)
    assert res.targets == [BashTarget("/my repo/b")]
    assert res.opaque == ["variable in target $PWD"]
    res = analyze('rm "$PWD"/*.o', "/w/[x]", HOME)
    assert res.targets == [BashTarget("/w/[[]x[]]/*.o", True)]


def test_relative_cwd_is_made_absolute() -> None:
    res = analyze("touch x", "rel/dir", HOME)
    assert res.targets and res.targets[0].path.endswith("/rel/dir/x")


def test_quoted_glob_chars_in_cwd_are_escaped() -> None:
    res = analyze("rm *.o", "/w/[x]", HOME)
    assert res.targets == [BashTarget("/w/[[]x[]]/*.o", True)]


def test_deep_nesting_is_bounded() -> None:
    cmd = "echo " + "$(echo " * 40 + "touch deep" + ")" * 40
    res = analyze(cmd, "/repo", HOME)
    assert res.targets == [] and "nesting too deep" in res.opaque
    res = analyze("bash -c 'bash -c \"touch two\"'", "/repo", HOME)
    assert res.targets == [BashTarget("/repo/two")]


def _bash_c(command: str, levels: int) -> str:
    for _ in range(levels):
        command = "bash -c '" + command.replace("'", "'\\''") + "'"
    return command


GIVE_UPS = [
    ("echo " + "$(echo " * 9 + "x | tee a" + ")" * 9, "nesting too deep"),
    (_bash_c("tee a", 9), "nesting too deep"),
    ("eval " + shlex.quote(_bash_c("tee a", 8)), "nesting too deep"),
    ("env " * 16 + "tee a", "too many wrappers"),
    ("find . -exec " + "env " * 16 + "tee a {} +", "too many wrappers"),
    ("touch {x{1..70},a}", "brace expansion truncated"),
    ("touch {" + "{a," * 30_000 + "}", "brace expansion truncated"),
    ("pushd d; " * 65 + "touch a", "pushd stack too deep"),
    ("cd " + "d/" * 2100 + " && touch a", "path too long"),
    ("cat p.diff | apply_patch", "apply_patch of a patch that cannot be read"),
    ("apply_patch < p.diff", "apply_patch of a patch that cannot be read"),
    ('apply_patch "$PATCH"', "apply_patch of a patch that cannot be read"),
    ("apply_patch", "apply_patch of a patch that cannot be read"),
    (
        "applypatch <<EOF\n*** Begin Patch\n*** Add File: $X\n+x\n*** End Patch\nEOF",
        "applypatch of a patch that cannot be read",
    ),
    (
        "apply_patch <<EOF\n*** Begin Patch\n*** Add File: x\n+$(cat y)\n*** End Patch\nEOF",
        "apply_patch of a patch that cannot be read",
    ),
    ("touch " + "d/" * 2100, "path too long"),
]


@pytest.mark.parametrize(("command", "why"), GIVE_UPS, ids=[c[1] for c in GIVE_UPS])
def test_giving_up_is_told_apart_from_what_cannot_be_seen(command: str, why: str) -> None:
    """Where a cap makes the analysis skip part of the command, `gave_up` says why
    (the skipped part may write anything); its reason is among the opaque ones."""
    res = analyze(command, "/repo", HOME)
    assert res.gave_up == why and why in res.opaque
    assert BashTarget("/repo/a") not in res.targets


def test_giving_up_is_kept_when_the_reasons_are_full() -> None:
    many = "; ".join(f"./s{k}.sh" for k in range(40))
    res = analyze(many + "; env " + "env " * 16 + "tee a", "/repo", HOME)
    assert len(res.opaque) == 32 and res.gave_up == "too many wrappers"


@pytest.mark.parametrize(
    "command",
    [
        'python -c \'x\'; ./x.sh; make; eval "$X"; xargs rm; cd "$D" && touch b',
        "touch a{1..64}; echo 'unterminated",
        "echo " + "$(echo " * 7 + "x" + ")" * 7,
        _bash_c("tee a", 7),
        "env " * 15 + "tee a",
        "pushd d; " * 64 + "touch a",
    ],
)
def test_what_the_analysis_knows_it_cannot_see_is_not_giving_up(command: str) -> None:
    assert analyze(command, "/repo", HOME).gave_up is None


def test_an_internal_error_is_giving_up(monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_hooks.shell import writes

    def boom(toks: object, ctx: object) -> None:
        raise RecursionError

    monkeypatch.setattr(writes, "_run", boom)
    res = analyze("touch a", "/repo", HOME)
    assert res.gave_up == "analysis error: RecursionError" and res.targets == []


def test_one_megabyte_commands_are_linear() -> None:
    cases = [  # each would take hours if some step were quadratic
        "echo " + "a" * 1_000_000 + " > big.txt",
        "touch a; " * 110_000,
        "cd a; " * 170_000,
        "$((" * 300_000,
        "echo {" + "{a," * 300_000,
        "'" + "x" * 1_000_000,
        "ln -s a b; " + "touch b/x; " * 30_000,
        "".join(f"ln -s l{i} l{i + 1}; " for i in range(64)) + "touch l64/x; " * 20_000,
        "find . -exec rm {} + ; " * 10_000,
        "chmod -w " * 30_000,
    ]
    for cmd in cases:
        start = time.process_time()  # CPU time: what else runs on the machine does not stretch it
        res = analyze(cmd, "/repo", HOME)
        assert time.process_time() - start < 30, cmd[:20]
        assert not any(r.startswith("analysis error") for r in res.opaque), (cmd[:20], res.opaque)
    assert analyze(cases[0], "/repo").targets == [BashTarget("/repo/big.txt")]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab /.~*?[]{},'\"\\$`()<>|&;#=-\n\t0123EOFcdrmtouhsgi", max_size=80))
def test_never_raises(command: str) -> None:
    res = analyze(command, "/repo", HOME)
    assert not any(r.startswith("analysis error") for r in res.opaque), res.opaque
    assert len(res.opaque) <= 32
    for t in res.targets:
        assert t.path.startswith("/") and norm(t.path) == t.path


@given(st.text(alphabet="ab/.", max_size=30))
def test_norm_matches_posixpath(path: str) -> None:
    expected = posixpath.normpath("/" + path)
    assert norm("/" + path) == ("/" + expected.lstrip("/"))


def test_hot_path_imports() -> None:
    code = f"import sys; sys.path.insert(0, {SRC!r}); import agent_hooks.shell.writes"
    proc = subprocess.run(
        [sys.executable, "-I", "-S", "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        check=True,
    )
    imported = {
        line.rsplit("|", 1)[-1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "agent_hooks.shell.writes" in imported
    forbidden = {
        "re",
        "shlex",
        "typing",
        "json",
        "enum",
        "dataclasses",
        "functools",
        "collections",
        "pathlib",
        "os",
        "posixpath",
    }
    assert not imported & forbidden


def test_the_commands_module_names_every_file_command_and_loads_them_lazily() -> None:
    """`commands.FILE_COMMANDS` mirrors `file_commands.FILE_HANDLERS`: a name added to one
    and not the other would go unseen (or crash) without this."""
    import subprocess
    import sys

    from agent_hooks.shell import commands, file_commands

    assert set(file_commands.FILE_HANDLERS) == commands.FILE_COMMANDS
    probe = (
        "import sys; from agent_hooks.shell import writes; "
        "writes.analyze('echo hi > out.txt', '/p'); "
        "print('agent_hooks.shell.file_commands' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"
