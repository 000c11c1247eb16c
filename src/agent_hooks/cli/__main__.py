"""`python -m agent_hooks.cli`: the same as the `agent-hooks` command."""

from agent_hooks.cli import main

main()
