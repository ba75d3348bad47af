"""The cyclic garbage collector, paused while the `wisp` program starts.

A `wisp` process spends most of its start importing: modules, classes and functions that live
as long as the process, and almost no garbage. Python's collector scanned them as they were
made, over and over: ~15 M instructions of `wisp approvals approve`'s start and ~9 M of a
hook's filing, against ~95 M for the interpreter's own start (callgrind; bench/README.md,
issue 41). So :func:`wisp.__main__.run` pauses it first (:func:`pause`), and a process that
is going to live on resumes it (:func:`resume`) once it has started: an asker once its first
request is filed (it then waits), a face (`wisp tui`, `relay`, `web`, `pending watch`) as it
begins to serve, `wisp mcp` once wisp's own start after its answer to `initialize` is
done. What the start made is frozen then (`gc.freeze`: never scanned again). A command that
starts, does its work and ends never collects: reference counting frees all but reference
cycles, and the process is gone in a moment.

Only a pause made here is resumed: a program that uses wisp as a library keeps its collector
as it set it.
"""

from __future__ import annotations

import gc

_paused = False


def pause() -> None:
    """Stop cyclic collection for the program's start (if it is on)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """The process lives on: freeze what its start made and collect again, if :func:`pause`
    stopped it."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
