"""`python -m wisp.relay`: the relay without the `wisp` command's own start-up (typer, rich),
which is how `wisp tui` starts the relay on this machine."""

import sys

from wisp.relay import main

sys.exit(main())
