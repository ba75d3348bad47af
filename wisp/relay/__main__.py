"""`python -m wisp.relay [--via tui]`: the relay without the `wisp` command's own start-up
(typer, rich), which is how `wisp tui` starts the relay on this machine."""

import sys

from wisp.relay import EXIT_ERROR, main, via_from_argv

via = via_from_argv(sys.argv[1:])
if via is None:
    sys.stderr.write("usage: python -m wisp.relay [--via relay|tui|web]\n")
    sys.exit(EXIT_ERROR)
sys.exit(main(via))
