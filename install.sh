#!/usr/bin/env bash
# agent-hooks installer: a private virtual environment, the `agent-hooks` command,
# and the hooks merged into Claude Code's settings.
#
#   ./install.sh                     install; hooks go into ~/.claude/settings.json
#   ./install.sh --project DIR       ... into DIR/.claude/settings.json instead
#   ./install.sh --no-settings       only the venv and the CLI (e.g. for the plugin form)
#   ./install.sh --statusline        also set Claude Code's status line to the active
#                                    work session (never replaces a status line of yours;
#                                    asked interactively when run from a terminal)
#   ./install.sh --uninstall [--project DIR]
#                                    remove exactly what install added
#
# Environment: PYTHON (interpreter to build the venv from, >= 3.11),
# AGENT_HOOKS_HOME (default ${XDG_DATA_HOME:-~/.local/share}/agent-hooks),
# AGENT_HOOKS_BIN (default ~/.local/bin), CLAUDE_CONFIG_DIR (Claude Code's ~/.claude).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
data=${AGENT_HOOKS_HOME:-${XDG_DATA_HOME:-$HOME/.local/share}/agent-hooks}
bin_dir=${AGENT_HOOKS_BIN:-$HOME/.local/bin}
venv=$data/venv
action=install
project=
settings_wanted=yes
statusline=ask

die() { echo "install.sh: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case $1 in
    --project) [ $# -ge 2 ] || die "--project needs a directory"; project=$2; shift 2 ;;
    --project=*) project=${1#--project=}; shift ;;
    --uninstall) action=uninstall; shift ;;
    --no-settings) settings_wanted=no; shift ;;
    --statusline) statusline=yes; shift ;;
    --no-statusline) statusline=no; shift ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done

if [ -n "$project" ]; then
  [ -d "$project" ] || die "--project $project: not a directory"
  settings_file=$(cd "$project" && pwd -P)/.claude/settings.json
else
  settings_file=${CLAUDE_CONFIG_DIR:-$HOME/.claude}/settings.json
fi

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

merge_settings() {  # $1 = install | uninstall
  local py=$1; shift
  PYTHONPATH=$repo/src "$py" -I -m agent_hooks.claude_settings "$@" --settings "$settings_file"
}

if [ "$action" = uninstall ]; then
  py=$venv/bin/python
  [ -x "$py" ] || py=$(find_python) || die "no Python >= 3.11 found to edit $settings_file"
  merge_settings "$py" uninstall
  if [ -z "$project" ]; then
    if [ -L "$bin_dir/agent-hooks" ] && [ "$(readlink "$bin_dir/agent-hooks")" = "$venv/bin/agent-hooks" ]; then
      rm -f "$bin_dir/agent-hooks" && echo "removed $bin_dir/agent-hooks"
    fi
    if [ -d "$data" ]; then
      rm -rf "$venv" "$data/hooks" "$data/installed-source"
      rmdir "$data" 2>/dev/null || true
      echo "removed $venv and $data/hooks"
    fi
    echo "Agents' state files in ${CLAUDE_CONFIG_DIR:-$HOME/.claude} are kept; remove them with 'agent-hooks cleanup --days 0' before uninstalling, if you want."
  fi
  exit 0
fi

python=$(find_python) || die "Python >= 3.11 is required (set PYTHON=/path/to/python3.11)"
if ! { [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null; }; then
  echo "creating $venv (from $python)"
  mkdir -p "$data"
  "$python" -m venv --clear "$venv"
fi
source_hash() {
  (cd "$repo" && find pyproject.toml README.md src hooks -type f ! -name '*.pyc' ! -path '*.egg-info/*' -print0 \
     | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
}
wanted=$(source_hash)
if [ "$(cat "$data/installed-source" 2>/dev/null)" = "$wanted" ] \
   && "$venv/bin/python" -I -c 'import agent_hooks.cli' 2>/dev/null; then
  echo "agent-hooks in $venv is up to date"
else
  echo "installing agent-hooks into $venv"
  rm -f "$data/installed-source"
  # setuptools builds in the clone and copies only files newer than its build/
  # copies: start clean, so sources restored with old mtimes are not skipped.
  rm -rf "$repo/build"
  # A non-editable install: the clone may be deleted afterwards.
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$repo"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$repo"
  echo "$wanted" > "$data/installed-source"
fi
mkdir -p "$data/hooks"
install -m 0755 "$repo/hooks/entry.py" "$data/hooks/entry.py"
# Run a hook exactly as Claude Code will (-IS, from outside the clone): it must start cleanly.
hook_check=$(cd / && echo '{}' | "$venv/bin/python" -IS "$data/hooks/entry.py" PreToolUse 2>&1) \
  && [ -z "$hook_check" ] || die "the installed hook does not start: $hook_check"
"$venv/bin/python" -I -c 'import agent_hooks.cli' || die "the installed CLI does not import"

mkdir -p "$bin_dir"
if [ -e "$bin_dir/agent-hooks" ] && ! [ -L "$bin_dir/agent-hooks" ]; then
  echo "warning: $bin_dir/agent-hooks exists and is not our link; left as it is (the CLI is $venv/bin/agent-hooks)" >&2
else
  ln -sfn "$venv/bin/agent-hooks" "$bin_dir/agent-hooks"
  echo "linked $bin_dir/agent-hooks"
fi
case ":$PATH:" in
  *":$bin_dir:"*) ;;
  *) echo "hint: $bin_dir is not on your PATH; add it (e.g. export PATH=\"$bin_dir:\$PATH\" in ~/.bashrc) so you and your agents can run agent-hooks" ;;
esac

if [ "$settings_wanted" = yes ]; then
  if [ "$statusline" = ask ]; then
    statusline=no
    if [ -t 0 ] && [ -t 1 ]; then
      printf 'Show the active work session in Claude Code'"'"'s status line? [y/N] '
      read -r answer || answer=
      case $answer in [yY]*) statusline=yes ;; esac
    fi
  fi
  extra=()
  [ "$statusline" = yes ] && extra=(--statusline)
  merge_settings "$venv/bin/python" install --python "$venv/bin/python" --entry "$data/hooks/entry.py" "${extra[@]}"
fi
echo "done. Start agents with distinct AGENT_NAMEs; see README.md for a tour."
