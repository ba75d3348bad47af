"""The floor under `wisp pending --json` (`bench/ratios.py`): one Python process that lists
the channel's directory, reads and `json.loads` every request file, and `json.dumps` the list
to stdout. No checks, no state, no liveness: the I/O and JSON a listing cannot avoid.

Run:  python bench/floor_list.py PENDING_DIR
"""

import json
import os
import sys

where = sys.argv[1]
requests = []
for name in os.listdir(where):
    if name.endswith(".request.json"):
        with open(os.path.join(where, name), "rb") as f:
            requests.append(json.loads(f.read()))
sys.stdout.write(json.dumps(requests))
sys.stdout.write("\n")
