"""The `wisp` program's own half, without the CLI's framework: no typer, click or rich.

What the program writes and how it ends (`writes.py`: exit codes, a message, JSON for
scripts, the listing, an answer typed at a terminal), a request, fact or grant found by what a
person types (`lookup.py`), and the listing every `pending` shows (`waiting.py`). The CLI
(:mod:`wisp.cli`) says everything through these; :mod:`wisp.__main__` serves the few command
lines that run before the CLI loads with them alone (`tests/test_cli_imports.py` holds that
none of them loads typer, click or rich).
"""
