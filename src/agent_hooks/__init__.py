"""agent-hooks: Claude Code hooks for many agents in one repository."""

__version__ = "0.1.0"
