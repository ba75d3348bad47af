"""Every exit code the `wisp` command uses, in one place (documented in docs/cli.md)."""

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0  # done; for an asking command: approved, answered
    NO = 1  # refused (nothing written), or the answer was no: denied, declined, withdrawn
    ERROR = 2  # usage error (a bad deadline included), or the channel cannot be used
    TIMED_OUT = 124  # an asking command's wait ended with no answer (as timeout(1) exits)
    INTERRUPTED = 130  # Ctrl-C before anything was written (as a shell reports SIGINT)
