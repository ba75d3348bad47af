"""`python -m wisp.mcp`: the same as `wisp mcp`."""

import sys

from wisp.mcp._run import main

sys.exit(main())
