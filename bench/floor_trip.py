"""A reference beside the round trip's floor (`bench/ratios.py`): the leanest round trip on
the channel's protocol that two Python processes can make. Not a target's floor (issue 41's is
`floor_publish.py`): what the trip costs in this interpreter before wisp does anything of its
own, to say how much of the trip's ratio the two processes and their reading already take.

The asker publishes ID.request.json; the answerer, woken by inotify, reads and `json.loads` it
and publishes ID.answer.json; the asker, woken, reads and loads that and publishes
ID.settled.json; the answerer hears that and reads it. Every publication as wisp makes one on
Linux: an O_TMPFILE written, fsynced, linked by /proc/self/fd into place, the directory
fsynced; records `json.dumps(indent=2)`, padded to wisp's files' sizes. No checks, no
liveness, no audit log, no records beyond dicts: the bare protocol.

Prints one JSON object: CPU (user + system) per trip of both processes and of each, start-up
left out.

Run:  python bench/floor_trip.py DIR TRIPS SIZE SIZE SIZE   (bytes of each publication)
"""

import ctypes
import json
import os
import resource
import struct
import sys

where, trips = sys.argv[1], int(sys.argv[2])
sizes = [int(s) for s in sys.argv[3:6]]
libc = ctypes.CDLL(None, use_errno=True)
IN_CREATE, IN_MOVED_TO = 0x100, 0x80
EVENT = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len


def record(request_id: str, size: int) -> bytes:
    body = {"format": 1, "id": request_id, "pad": ""}
    short = size - len(json.dumps(body, indent=2)) - 1
    body["pad"] = "x" * max(short, 0)
    return (json.dumps(body, indent=2) + "\n").encode()


def publish(dir_fd: int, name: str, data: bytes) -> None:
    fd = os.open(".", os.O_WRONLY | os.O_TMPFILE | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
    try:
        os.write(fd, data)
        os.fsync(fd)
        os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=dir_fd, follow_symlinks=True)
    finally:
        os.close(fd)
    os.fsync(dir_fd)


def read(dir_fd: int, name: str) -> dict:
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        return json.loads(os.read(fd, 65537))
    finally:
        os.close(fd)


def names(inotify_fd: int) -> list[str]:
    buf = os.read(inotify_fd, 65536)
    out, i = [], 0
    while i < len(buf):
        _wd, _mask, _cookie, length = EVENT.unpack_from(buf, i)
        out.append(buf[i + 16 : i + 16 + length].rstrip(b"\0").decode())
        i += 16 + length
    return out


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    results_r, results_w = os.pipe()
    ready_r, ready_w = os.pipe()
    answerer = os.fork()
    inotify_fd = libc.inotify_init1(os.O_CLOEXEC)  # each process its own, after the fork
    mask = IN_CREATE | IN_MOVED_TO
    if inotify_fd < 0 or libc.inotify_add_watch(inotify_fd, where.encode(), mask) < 0:
        raise OSError(ctypes.get_errno(), "inotify")
    dir_fd = os.open(where, os.O_RDONLY | os.O_DIRECTORY)
    if answerer == 0:
        os.write(ready_w, b".")
        cpu0, done = cpu(), 0
        while done < trips:
            for name in names(inotify_fd):
                if name.endswith(".request.json"):
                    request_id = read(dir_fd, name)["id"]
                    publish(dir_fd, f"{request_id}.answer.json", record(request_id, sizes[1]))
                elif name.endswith(".settled.json"):
                    read(dir_fd, name)
                    done += 1
        os.write(results_w, struct.pack("d", cpu() - cpu0))
        os._exit(0)
    os.read(ready_r, 1)
    cpu0 = cpu()
    for _ in range(trips):
        request_id = os.urandom(8).hex()
        publish(dir_fd, f"{request_id}.request.json", record(request_id, sizes[0]))
        answered = f"{request_id}.answer.json"
        while answered not in names(inotify_fd):
            pass
        read(dir_fd, answered)
        publish(dir_fd, f"{request_id}.settled.json", record(request_id, sizes[2]))
    asking = cpu() - cpu0
    answering = struct.unpack("d", os.read(results_r, 8))[0]
    os.waitpid(answerer, 0)
    print(
        json.dumps(
            {
                "trips": trips,
                "cpu_s_per_trip": (asking + answering) / trips,
                "asker_cpu_s_per_trip": asking / trips,
                "answerer_cpu_s_per_trip": answering / trips,
            }
        )
    )


main()
