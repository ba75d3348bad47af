"""Every exit code the `wisp` command uses (documented in docs/cli.md): :class:`ExitCode`,
which lives in :mod:`wisp.program.writes`, beside what the program serves before the CLI loads."""

from wisp.program.writes import ExitCode

__all__ = ["ExitCode"]
