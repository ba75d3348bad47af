"""The floor under a round trip's CPU (`bench/ratios.py`): the trip's three publications (its
request, answer and outcome files) done raw, in one process, on the same disk: for each, a
staged file created, written, fsynced and closed, linked to its final name, the staged name
unlinked, and the directory fsynced. Nothing read, parsed, watched or checked.

Prints one JSON object: the CPU (user + system) and wall time per trip, start-up left out.

Run:  python bench/floor_publish.py DIR TRIPS SIZE SIZE SIZE   (bytes of each publication)
"""

import json
import os
import sys
import time

where, trips, sizes = sys.argv[1], int(sys.argv[2]), [int(s) for s in sys.argv[3:]]
payloads = [b"x" * size for size in sizes]
dir_fd = os.open(where, os.O_RDONLY | os.O_DIRECTORY)
cpu0, wall0 = time.process_time(), time.perf_counter()
for trip in range(trips):
    for n, payload in enumerate(payloads):
        staged, final = f".{trip}-{n}.tmp", f"{trip}-{n}.json"
        fd = os.open(staged, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600, dir_fd=dir_fd)
        os.write(fd, payload)
        os.fsync(fd)
        os.close(fd)
        os.link(staged, final, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        os.unlink(staged, dir_fd=dir_fd)
        os.fsync(dir_fd)
cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
os.close(dir_fd)
print(json.dumps({"trips": trips, "cpu_s_per_trip": cpu / trips, "wall_s_per_trip": wall / trips}))
