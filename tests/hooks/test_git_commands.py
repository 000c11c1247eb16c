"""Git commands that rewrite the work tree (issue 18, item 2): refused while another
live writer holds files in that work tree, naming the holder and the safe form;
the forms that touch only named paths are judged by those paths; nothing is
refused while nobody else holds anything. Real entry scripts, HOME in a temp dir."""

from __future__ import annotations

import pytest

from hook_runner import HookResult, HookRunner

ME, OTHER = "proj__cc_1", "proj__cc_2"


def hold(run: HookRunner, rel: str, agent: str) -> None:
    path = run.project / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("work in progress\n")
    payload = run.payload("PreToolUse_Write", tool_input={"file_path": str(path), "content": "x"})
    assert run("PreToolUse", payload, agent=agent).out is None


def bash(run: HookRunner, command: str, agent: str = OTHER) -> HookResult:
    payload = run.payload("PreToolUse_Bash", tool_input={"command": command})
    return run("PreToolUse", payload, agent=agent)


def refused(result: HookResult) -> str:
    assert result.out is not None, result
    decision = result.out["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny", decision
    reason: str = decision["permissionDecisionReason"]
    return reason


@pytest.mark.parametrize(
    "command",
    [
        "git stash",
        "git stash push",
        "git stash -u",
        "git stash pop",
        "git checkout main",
        "git checkout -f",
        "git switch main",
        "git reset --hard",
        "git reset --hard HEAD~1",
        "git clean -fd",
        "git pull",
        "git merge feature",
        "git rebase main",
        "git cherry-pick abc123",
        "git revert HEAD",
        "git am < patch.mbox",
        "git apply fix.patch",
        "cd src && git stash",
        "git -C . stash",
    ],
)
def test_a_command_rewriting_the_work_tree_is_refused_while_another_writer_holds_files(
    run_hook: HookRunner, command: str
) -> None:
    hold(run_hook, "src/x.py", ME)
    reason = refused(bash(run_hook, command))
    assert "would change or sweep away files other writers are changing" in reason
    assert 'src/x.py (agent "proj__cc_1")' in reason
    assert "git stash push -- <your paths>" in reason


def test_git_checkout_of_a_file_without_dashes_is_a_write_of_that_file(
    run_hook: HookRunner,
) -> None:
    """Defect 1: `git checkout src/x.py` read as a branch name let the holder's edit go."""
    hold(run_hook, "src/x.py", ME)
    reason = refused(bash(run_hook, "git checkout src/x.py"))
    assert "src/x.py is being changed by" in reason
    (run_hook.project / "other.py").write_text("mine\n")
    assert bash(run_hook, "git checkout other.py").out is None  # only that file: free


@pytest.mark.parametrize(
    "command",
    [
        "git stash push -- other.py",
        "git checkout -- other.py",
        "git restore other.py",
        "git switch -c new-branch",
        "git checkout -b new-branch",
        "git status",
        "git stash list",
        "git merge --abort",
        "git rebase --abort",
        "git diff",
        "git commit -m wip",
    ],
)
def test_forms_that_leave_others_files_alone_are_allowed(
    run_hook: HookRunner, command: str
) -> None:
    hold(run_hook, "src/x.py", ME)
    (run_hook.project / "other.py").write_text("mine\n")
    assert bash(run_hook, command).out is None


def test_nothing_is_refused_while_nobody_else_holds_anything(run_hook: HookRunner) -> None:
    hold(run_hook, "src/x.py", OTHER)  # the writer's own lease
    assert bash(run_hook, "git stash").out is None
    assert bash(run_hook, "git reset --hard").out is None
