"""`wisp completion SHELL`: typer's own completion script for bash, zsh or fish, printed.

The script asks `wisp` itself what completes (through $_WISP_COMPLETE): commands, options,
choices, and for the answering commands and `wisp show` the IDs of the requests waiting now.
It is the one way: typer's `--install-completion` and `--show-completion` are not offered.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import Annotated

import typer
from typer._completion_shared import get_completion_script

from wisp.cli._common import choice_of, choices

PROG = "wisp"
COMPLETE_VAR = "_WISP_COMPLETE"

COMPLETION_EXAMPLES = """Examples:
  wisp completion bash >> ~/.bashrc
  wisp completion zsh > ~/.zfunc/_wisp        (with ~/.zfunc in $fpath)
  wisp completion fish > ~/.config/fish/completions/wisp.fish
  eval "$(wisp completion bash)"              (this shell only)"""


class Shell(StrEnum):
    BASH = "bash"
    ZSH = "zsh"
    FISH = "fish"


def completion(
    shell: Annotated[
        Shell,
        typer.Argument(
            parser=choice_of(Shell), metavar=choices(Shell), help="The shell to complete in."
        ),
    ],
) -> None:
    """Print the shell completion script for bash, zsh or fish.

    Source it from your shell's startup file; then Tab completes commands, options, and the
    IDs of the requests waiting for you."""
    script = get_completion_script(prog_name=PROG, complete_var=COMPLETE_VAR, shell=shell.value)
    sys.stdout.write(script + "\n")
