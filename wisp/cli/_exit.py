"""Every exit code the `wisp` command uses (documented in docs/cli.md): :class:`ExitCode`,
which lives in :mod:`wisp._program`, beside what the program serves before the CLI loads."""

from wisp._program import ExitCode

__all__ = ["ExitCode"]
