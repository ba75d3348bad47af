"""What every asking command shares (`approvals request`, `questions ask`, `facts request`):
starting an asker for this process, and stopping it cleanly whatever happens."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from pending import PendingError
from wisp._asking import Asker
from wisp._audit import EntryPoint
from wisp._config import Config
from wisp.cli._common import fail, open_channel, tell


@contextmanager
def asking(entry_point: EntryPoint, config: Config) -> Iterator[Asker]:
    """An asker for this command's life: on the way out (an error, Ctrl-C, or done) what it
    still waits on is withdrawn, its lock released and the channel closed."""
    channel = open_channel()
    try:
        asker = Asker(
            channel,
            entry_point=entry_point,
            client="wisp-cli",
            liveness_recheck_s=config["watch.livenessSeconds"],
            on_warning=lambda message: tell(f"wisp: {message}"),
        )
    except (OSError, PendingError) as exc:
        channel.close()
        fail(f"cannot ask through {channel.path}: {exc}. Check it with `wisp doctor`.")
    try:
        yield asker
    finally:
        try:
            asker.close()
        finally:
            channel.close()


def waiting_note(timeout_s: float) -> str:
    if not timeout_s:
        return "waiting until you answer (Ctrl-C withdraws it)"
    return f"waiting up to {timeout_s:g} s (Ctrl-C withdraws it)"


def timeout_or_fail(timeout: float | None, config: Config) -> float:
    timeout_s: float = config["approval.timeoutSeconds"] if timeout is None else timeout
    if timeout_s < 0:
        fail("--timeout takes seconds, 0 or more (0 waits until answered).")
    return timeout_s
