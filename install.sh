#!/usr/bin/env bash
# agent-hooks installer: a private virtual environment, the `agent-hooks` command,
# and the hooks put into each client: Claude Code, Codex, Gemini CLI, Qwen Code, opencode.
#
#   ./install.sh                     install; hooks go into ~/.claude/settings.json, and
#                                    into each other client found here (its command on
#                                    PATH or its directory present): Codex
#                                    (~/.codex/hooks.json + trust entries in
#                                    ~/.codex/config.toml), Gemini CLI
#                                    (~/.gemini/settings.json), Qwen Code
#                                    (~/.qwen/settings.json), opencode (a plugin,
#                                    ~/.config/opencode/plugin/agent-hooks.js)
#   ./install.sh --clients claude,codex,gemini,qwen,opencode
#                                    exactly these clients (any subset)
#   ./install.sh --project DIR       ... into DIR/.claude/settings.json, DIR/.codex/hooks.json,
#                                    DIR/.gemini/settings.json, DIR/.qwen/settings.json and
#                                    DIR/.opencode/plugin/ instead, saying what you must do
#                                    so each client trusts DIR (--trust-project: trust it
#                                    in Codex, Gemini CLI and Qwen Code for you)
#   ./install.sh --yes               ... and add the PATH line to your shell's profile when a
#                                    login shell does not find agent-hooks (asked on a
#                                    terminal; never done without a terminal or --yes)
#   ./install.sh --no-settings       only the venv and the CLI (e.g. for the plugin form)
#   ./install.sh --statusline        also set Claude Code's status line to the active
#                                    work session (never replaces a status line of yours;
#                                    asked interactively when run from a terminal)
#   ./install.sh --uninstall         remove exactly what install added, from every client
#                                    and every project it went into, then the installed copy
#   ./install.sh --uninstall --project DIR
#                                    ... from DIR's files only (the installed copy stays)
#   ./install.sh --uninstall --purge [--yes]
#                                    ... and all of agent-hooks' state, log, data, recorded
#                                    git guards and ledgers; lists them and asks first
#
# Every hook command runs only while the interpreter and entry script are there, and
# otherwise exits 0 saying nothing: a hook left behind never refuses a tool call.
#
# Environment: PYTHON (interpreter to build the venv from, >= 3.11),
# AGENT_HOOKS_HOME (default ${XDG_DATA_HOME:-~/.local/share}/agent-hooks),
# AGENT_HOOKS_BIN (default ~/.local/bin), CLAUDE_CONFIG_DIR (Claude Code's ~/.claude),
# CODEX_HOME (Codex's ~/.codex), GEMINI_CLI_HOME (Gemini CLI's ~/.gemini is in it),
# QWEN_HOME (Qwen Code's ~/.qwen), XDG_CONFIG_HOME (opencode's ~/.config/opencode is in it).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
data=${AGENT_HOOKS_HOME:-${XDG_DATA_HOME:-$HOME/.local/share}/agent-hooks}
bin_dir=${AGENT_HOOKS_BIN:-$HOME/.local/bin}
venv=$data/venv
link=$bin_dir/agent-hooks
record=$data/install-record.json   # the permission rules install added to Claude Code's files
clients_record=$data/clients.json  # every client and project install went into
state_dir=${CLAUDE_CONFIG_DIR:-$HOME/.claude}
action=install
project=
settings_wanted=yes
statusline=ask
purge=no
assume_yes=no
clients=
trust_project=no

die() { echo "install.sh: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case $1 in
    --project) [ $# -ge 2 ] || die "--project needs a directory"; project=$2; shift 2 ;;
    --project=*) project=${1#--project=}; shift ;;
    --clients) [ $# -ge 2 ] || die "--clients needs a list (claude,codex,gemini,qwen,opencode)"; clients=$2; shift 2 ;;
    --clients=*) clients=${1#--clients=}; shift ;;
    --trust-project) trust_project=yes; shift ;;
    --uninstall) action=uninstall; shift ;;
    --purge) purge=yes; shift ;;
    -y|--yes) assume_yes=yes; shift ;;
    --no-settings) settings_wanted=no; shift ;;
    --statusline) statusline=yes; shift ;;
    --no-statusline) statusline=no; shift ;;
    -h|--help) sed -n '2,/^set -/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
[ "$purge" = no ] || [ "$action" = uninstall ] || die "--purge goes with --uninstall"
[ "$purge" = no ] || [ -z "$project" ] \
  || die "--purge removes every install and all state; run it without --project"
[ "$trust_project" = no ] || { [ -n "$project" ] && [ "$action" = install ]; } \
  || die "--trust-project goes with --project DIR (install)"
[ -z "$clients" ] || [ "$action" = install ] \
  || die "--uninstall takes agent-hooks out of every client it went into; drop --clients"

if [ -n "$project" ]; then
  [ -d "$project" ] || [ "$action" = uninstall ] || die "--project $project: not a directory"
  settings_file=$(cd "$project" 2>/dev/null && pwd -P || echo "$project")/.claude/settings.json
else
  settings_file=${CLAUDE_CONFIG_DIR:-$HOME/.claude}/settings.json
fi
say() { echo "==> $*"; }  # each step, as it starts

find_python() {
  # The interpreter's own path, never a version manager's shim (a shim made hooks 11x slower).
  local candidate real
  for candidate in ${PYTHON:-} python3 python3.13 python3.12 python3.11; do
    command -v "$candidate" >/dev/null 2>&1 || continue
    real=$("$candidate" -c 'import sys; assert sys.version_info >= (3, 11); print(sys.executable)' 2>/dev/null) || continue
    [ -x "$real" ] && { echo "$real"; return 0; }
  done
  return 1
}

run_module() {  # run_module PY MODULE ARGS...: this clone's module, whatever the venv holds
  local py=$1 module=$2; shift 2
  "$py" -I -c 'import runpy, sys; sys.path.insert(0, sys.argv.pop(1)); runpy.run_module(sys.argv.pop(1), run_name="__main__", alter_sys=True)' \
    "$repo/src" "$module" "$@"
}

created=()
make_dir() {  # mkdir -p, remembering the directories that did not exist (uninstall removes them if empty)
  local dir=$1
  while [ ! -d "$dir" ] && [ ! -L "$dir" ]; do created+=("$dir"); dir=$(dirname -- "$dir"); done
  mkdir -p -- "$1"
}
remember_created() {
  [ ${#created[@]} -gt 0 ] || return 0
  { cat "$data/created-dirs" 2>/dev/null || true; printf '%s\n' "${created[@]}"; } \
    | while IFS= read -r dir; do [ ! -d "$dir" ] || printf '%s\n' "$dir"; done \
    | LC_ALL=C sort -u > "$data/created-dirs.new"
  mv -f "$data/created-dirs.new" "$data/created-dirs"
  created=()
}
remove_data_if_unused() {  # once no install and no record is left: the data dir and the empty dirs install made
  [ ! -e "$venv" ] && [ ! -e "$record" ] && [ ! -e "$clients_record" ] || return 0
  local dirs= left=
  dirs=$(cat "$data/created-dirs" 2>/dev/null || true)
  if [ "$purge" = yes ]; then  # purge leaves nothing of ours: the records go with the rest
    rm -rf "$data" && echo "removed $data/"
  else
    rm -f "$data/created-dirs" "$data/cli-link"
    rmdir "$data" 2>/dev/null || true
  fi
  [ -n "$dirs" ] || return 0
  printf '%s\n' "$dirs" | LC_ALL=C sort -r | while IFS= read -r dir; do
    rmdir -- "$dir" 2>/dev/null || true
  done
  [ "$purge" = no ] || return 0  # purge leaves nothing: what still holds something is not ours
  left=$(printf '%s\n' "$dirs" | while IFS= read -r dir; do [ ! -d "$dir" ] || printf '%s\n' "$dir"; done)
  if [ -n "$left" ]; then  # still holding something (agents' state): remembered for --purge
    make_dir "$data"
    while IFS= read -r dir; do created+=("$dir"); done <<< "$left"
    remember_created
  fi
}
clients_args=(--record "$clients_record" --settings-record "$record")

if [ "$action" = uninstall ]; then
  py=$venv/bin/python
  [ -x "$py" ] || py=$(find_python) || die "no Python >= 3.11 found to edit the clients' files"
  status=0
  if [ "$purge" = yes ]; then
    # List everything first (the CLI is still there), ask, and only then remove.
    yes_flag=()
    [ "$assume_yes" = yes ] && yes_flag=(--yes)
    purge_args=(--state-dir "$state_dir" --settings "$settings_file" --record "$record" --link "$link" --data "$data" --clients-record "$clients_record")
    run_module "$py" agent_hooks.install.purge plan "${purge_args[@]}" ${yes_flag[@]+"${yes_flag[@]}"} || status=$?
    [ "$status" -eq 0 ] || exit "$status"
    # Settings first (no hook starts any more), guards, ledgers, state; then the copy itself.
    run_module "$py" agent_hooks.install.purge run "${purge_args[@]}" || status=$?
  else
    say "taking agent-hooks out of every client${project:+ for $project}"
    run_module "$py" agent_hooks.install.clients uninstall ${project:+--project "$project"} \
      "${clients_args[@]}" || status=$?
  fi
  if [ -z "$project" ]; then
    if [ -L "$link" ] && [ "$(readlink "$link")" = "$venv/bin/agent-hooks" ]; then
      rm -f "$link" && echo "removed $link"
    fi
    [ "$purge" = yes ] || run_module "$py" agent_hooks.install.purge kept --state-dir "$state_dir" \
      --settings "$settings_file" --record "$record" || true
    if [ -d "$data" ] && { [ -e "$clients_record" ] || [ -e "$record" ]; }; then
      # A hook uninstall could not take out still runs them: keep them (it fails open without
      # them, but it would guard nothing), and say so.
      echo "kept $venv and $data/hooks: the hooks above that could not be taken out still run them; fix what stopped it and run ./install.sh --uninstall again" >&2
    elif [ -d "$data" ]; then
      rm -rf "$venv" "$data/hooks" "$data/installed-source" "$data/cache"
      echo "removed $venv and $data/hooks"
    fi
  fi
  remove_data_if_unused
  exit "$status"
fi

python=$(find_python) || die "Python >= 3.11 is required (set PYTHON=/path/to/python3.11)"
if [ "$settings_wanted" = yes ]; then
  choice=$(run_module "$python" agent_hooks.install.clients choose ${clients:+--clients "$clients"}) \
    || die "see --help for --clients"
  chosen=${choice%%$'\n'*}
  echo "clients:"
  printf '%s\n' "${choice#*$'\n'}"
else
  chosen=
fi
# pip's downloads and version check stay in our own directory: uninstall leaves no trace.
export PIP_CACHE_DIR=$data/cache/pip PIP_DISABLE_PIP_VERSION_CHECK=1
if ! { [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null; }; then
  say "creating $venv (from $python)"
  make_dir "$data"
  "$python" -m venv --clear "$venv"
fi
source_hash() {  # one SHA-256 over the sources pip installs: any change reinstalls.
  # Python, not sha256sum, which macOS lacks: the interpreter is there anyway.
  "$python" -I - "$repo" <<'PY'
import hashlib, os, stat, sys
root = sys.argv[1]
found = []
def add(path):
    if not path.endswith(".pyc") and stat.S_ISREG(os.lstat(path).st_mode):
        found.append(os.fsencode(os.path.relpath(path, root)))
for top in ("pyproject.toml", "README.md", "src", "hooks"):
    path = os.path.join(root, top)
    if not os.path.isdir(path):
        add(path)
        continue
    for base, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if not d.endswith(".egg-info")]
        for name in files:
            add(os.path.join(base, name))
digest = hashlib.sha256()
for rel in sorted(found):
    with open(os.path.join(os.fsencode(root), rel), "rb") as handle:
        digest.update(rel + b"\0" + hashlib.sha256(handle.read()).digest())
print(digest.hexdigest())
PY
}
wanted=$(source_hash)
if [ "$(cat "$data/installed-source" 2>/dev/null)" = "$wanted" ] \
   && "$venv/bin/python" -I -c 'import agent_hooks.cli' 2>/dev/null; then
  echo "agent-hooks in $venv is up to date"
else
  say "installing agent-hooks and its dependencies into $venv (pip; about 15 s)"
  rm -f "$data/installed-source"
  # setuptools builds in the clone and copies only files newer than its build/
  # copies: start clean, so sources restored with old mtimes are not skipped.
  rm -rf "$repo/build"
  # A non-editable install: the clone may be deleted afterwards.
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$repo"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$repo"
  echo "$wanted" > "$data/installed-source"
fi
remember_created
say "compiling the hooks' entry script into $data/hooks/"
mkdir -p "$data/hooks/opencode"
install -m 0755 "$repo/hooks/entry.py" "$data/hooks/entry.py"
install -m 0644 "$repo/hooks/opencode/agent-hooks.js" "$data/hooks/opencode/agent-hooks.js"
# Claude Code runs the entry script compiled: Python compiles a script given as source on
# every run (~1 M instructions, 4% of a bare interpreter's start; ADR-0005), a .pyc it runs.
entry="$data/hooks/entry.pyc"
"$venv/bin/python" -I -c 'import py_compile, sys; py_compile.compile(sys.argv[1], sys.argv[2], doraise=True)' \
  "$data/hooks/entry.py" "$entry" || die "could not compile $data/hooks/entry.py"
# Run a hook exactly as Claude Code will (-IS, from outside the clone): it must start cleanly.
# (Each client's own command is run the same way before anything goes into its files.)
hook_check=$(cd / && echo '{}' | "$venv/bin/python" -IS "$entry" PreToolUse 2>&1) \
  && [ -z "$hook_check" ] || die "the installed hook does not start: $hook_check"
"$venv/bin/python" -I -c 'import agent_hooks.cli' || die "the installed CLI does not import"

make_dir "$bin_dir"
remember_created
if [ -e "$link" ] && ! [ -L "$link" ]; then
  echo "warning: $link exists and is not our link; left as it is (the CLI is $venv/bin/agent-hooks)" >&2
else
  ln -sfn "$venv/bin/agent-hooks" "$link"
  echo "linked $link"
fi
printf '%s\n' "$link" > "$data/cli-link"

say "checking that a login shell finds agent-hooks"
run_module "$venv/bin/python" agent_hooks.install.login_path offer --link "$link" --bin-dir "$bin_dir" \
  $([ "$assume_yes" = no ] || echo --yes) || true

extra=()
case " $chosen " in
  *" claude "*)
    if [ "$statusline" = ask ]; then
      statusline=no
      if [ -t 0 ] && [ -t 1 ]; then
        printf 'Show the active work session in Claude Code'"'"'s status line? [y/N] '
        read -r answer || answer=
        case $answer in [yY]*) statusline=yes ;; esac
      fi
    fi
    [ "$statusline" = yes ] && extra=(--statusline)
    ;;
esac
if [ -n "$chosen" ]; then
  say "putting the hooks into each client${project:+ for $project}"
  run_module "$venv/bin/python" agent_hooks.install.clients install --clients "${chosen// /,}" \
    --python "$venv/bin/python" --entry "$entry" --cli "$link" ${project:+--project "$project"} \
    $([ "$trust_project" = no ] || echo --trust-project) ${extra[@]+"${extra[@]}"} \
    "${clients_args[@]}" || die "could not install into every client (see above)"
fi
echo "done. Start each agent in a tmux pane of its own with: agent-hooks launch CLIENT (README.md, Quickstart; docs/tour.md for a tour)."
