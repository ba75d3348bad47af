"""The doctor's findings: is the channel safe and usable, and what would reach the person.

The CLI's `wisp doctor` renders these; any face may show them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pending import Channel, State, Watcher
from wisp.audit.reader import AuditLogError, check_writable
from wisp.audit.writer import EntryPoint, audit_path
from wisp.routes.notify import Notifier, Route, default_notifier
from wisp.routes.push import apprise_installed, push_install
from wisp.stores.config import CONFIG_FILE, ConfigError, load_config
from wisp.stores.facts import FactStore
from wisp.stores.grants import GrantStore
from wisp.stores.jsonstore import StoreError
from wisp.stores.pushurls import redact

# Below this much free space in the channel's filesystem, requests, answers and outcomes may
# soon fail to be written: 4 MiB is 64 requests at the 64 KiB cap, with room for the stores.
MIN_FREE_BYTES = 4 * 1024 * 1024
# Likewise for free inodes (each request, answer and outcome is a file), where counted.
MIN_FREE_INODES = 64
# The push URL the doctor suggests when nothing reaches the person: ntfy.sh's public server,
# on a topic as secret as a password (anyone who knows it can read the notifications).
EXAMPLE_PUSH_URL = "ntfy://A-TOPIC-ONLY-YOU-KNOW"


def diagnose(channel: Channel) -> dict[str, Any]:
    """Everything `wisp doctor --json` prints (docs/cli.md): the channel's mode and owner,
    whether native watching starts, live servers, requests by state, skipped entries, and the
    notification route that would be taken here."""
    listing = channel.listing()
    st = os.fstat(channel.dir_fd)
    servers = sorted({s.request.server.id for s in listing.statuses if s.server_alive})
    counts = {state.value: 0 for state in State}
    for status in listing.statuses:
        counts[status.state.value] += 1
    checks = [*check_stores(channel.home), check_space(channel.path), *check_web(channel.home)]
    return {
        "channel": str(channel.path),
        "ok": not listing.problems and all(c["ok"] for c in checks),
        "mode": f"{st.st_mode & 0o777:04o}",
        "owner": st.st_uid,
        "watching": _watching(channel),
        "liveServers": len(servers),
        "states": counts,
        "problems": [{"name": p.name, "reason": p.reason} for p in listing.problems],
        "checks": checks,
        "notification": reach(default_notifier(channel.home, EntryPoint.NOTIFY)),
    }


def reach(notifier: Notifier) -> dict[str, Any]:
    """What a notification from this very process would do: the route it would take (the
    routes here, checked as posting would find them, then push), each skipped route's
    reason, the push targets (redacted), and a warning with its fix when nothing would
    reach the person."""
    routes = notifier.describe()
    enabled = bool(notifier.settings.get("notifications.enabled", True))
    route = next((r for r, why in routes if why is None), None) if enabled else None
    push_why = dict(routes)[Route.PUSH]
    warning, fix = None, None
    if not enabled:
        warning = "notifications are off (notifications.enabled): nothing will tell you"
        fix = "wisp config set notifications.enabled true"
    elif route is None:
        warning = "no route can reach you from here: a request can wait, unseen, until it times out"
        fix = f"wisp config set notifications.push '{EXAMPLE_PUSH_URL}'"
        if notifier.push_urls():
            fix = push_install()  # the targets are set: Apprise is what is missing
        elif not apprise_installed():
            fix = f"{push_install()} && {fix}"
    return {
        "route": route,
        "skipped": [f"{r}: {why}" for r, why in routes if why is not None],
        "routes": routes,
        "push": {
            "targets": [redact(url) for url in notifier.push_urls()],
            "when": notifier.push_when().value,
            "usable": push_why is None,
        },
        "warning": warning,
        "fix": fix,
    }


SEND_TEST_TITLE = "wisp doctor"
SEND_TEST_MESSAGE = "a test notification: if you read this, wisp reaches you here"


def send_test(home: Path) -> dict[str, Any]:
    """`wisp doctor --send-test`: post a test notification as a filed request's would go
    (the routes here in order, then push), waiting for the push, and say what became of it:
    the route that took it, and each push target posted or failed. ``ok`` is false when
    nothing took it, or when a push target failed: a route that fails is failing."""
    try:
        settings = load_config(home).values
    except ConfigError:
        settings = {}  # reported by the config check
    notifier = Notifier(
        home, settings=settings, entry_point=EntryPoint.NOTIFY, background_push=False
    )
    result = notifier.post(SEND_TEST_TITLE, SEND_TEST_MESSAGE, source="user")
    targets = [d.record() for d in result.deliveries]
    failed = [t for t in targets if t["outcome"] != "posted"]
    return {
        "posted": result.posted,
        "route": result.route,
        "detail": result.detail,
        "push": result.push,
        "targets": targets,
        "reason": result.reason,
        "skipped": list(result.skipped),
        "ok": result.posted and not failed,
    }


def _watching(channel: Channel) -> dict[str, Any]:
    """Whether native watching starts here, and the kernel's inotify limits."""
    notes: list[str] = []
    watcher = Watcher(channel, on_warning=notes.append)
    try:
        watcher.start()
        backend = "inotify" if watcher.backend and watcher.backend.value == "native" else "polling"
    except OSError as exc:
        backend, notes = "unavailable", [str(exc)]
    finally:
        watcher.stop()
    limits = {}
    for name in ("max_user_watches", "max_user_instances", "max_queued_events"):
        try:
            limits[name] = int(Path(f"/proc/sys/fs/inotify/{name}").read_text())
        except (OSError, ValueError):
            continue
    return {"backend": backend, "note": "; ".join(notes) or None, "limits": limits}


def _check(
    name: str, path: Path | str, detail: str, *, ok: bool, fix: str | None = None
) -> dict[str, Any]:
    return {"check": name, "path": str(path), "ok": ok, "detail": detail, "fix": fix}


def check_stores(home: Path) -> list[dict[str, Any]]:
    """Every store and setting wisp reads: config.json, facts.json, grants.json, and whether
    the audit log can be appended to. Each says ok, or what is wrong and the fix."""
    checks = []
    config_path = home / CONFIG_FILE
    try:
        values = load_config(home).values
        detail = f"{len(values)} setting(s) set" if values else "defaults (nothing set)"
        checks.append(_check("config", config_path, detail, ok=True))
    except ConfigError as exc:
        checks.append(
            _check(
                "config",
                config_path,
                str(exc),
                ok=False,
                fix=f"fix {config_path} or move it aside (the defaults then apply); "
                "`wisp config set KEY VALUE` writes one setting checked",
            )
        )
    facts = FactStore(home)
    try:
        facts.check_writable()
        count = len(facts.list())
        checks.append(_check("facts", facts.path, f"{count} permanent fact(s)", ok=True))
    except StoreError as exc:
        checks.append(
            _check(
                "facts",
                facts.path,
                str(exc),
                ok=False,
                fix=f"fix {facts.path} or move it aside; until then nothing can be kept",
            )
        )
    grants = GrantStore(home)
    try:
        count = len(grants.list())
        checks.append(_check("grants", grants.path, f"{count} standing approval(s)", ok=True))
    except StoreError as exc:
        checks.append(
            _check(
                "grants",
                grants.path,
                str(exc),
                ok=False,
                fix=f"fix {grants.path} or move it aside; until then no grant approves anything",
            )
        )
    log = audit_path(home)
    try:
        checks.append(_check("audit log", log, f"writable ({check_writable(home)})", ok=True))
    except AuditLogError as exc:
        checks.append(
            _check(
                "audit log",
                log,
                str(exc),
                ok=False,
                fix=f"make {log} a regular file of yours that you can write (or move it aside "
                "and let wisp make a new one); until then nothing is recorded",
            )
        )
    return checks


# How long the doctor waits for `wisp web` at web.url to answer.
WEB_CHECK_TIMEOUT_S = 3.0


def check_web(home: Path) -> list[dict[str, Any]]:
    """Whether `wisp web` answers at `web.url` (its `/healthz`), where a notification's link
    sends the person: one finding, or none when web.url is not set."""
    try:
        base = str(load_config(home)["web.url"]).rstrip("/")
    except ConfigError:
        return []  # said by the config check
    if not base:
        return []
    import urllib.error
    import urllib.request

    problem = None
    try:
        with urllib.request.urlopen(  # noqa: S310  # web.url is checked: http(s) only
            f"{base}/healthz", timeout=WEB_CHECK_TIMEOUT_S
        ) as response:
            if response.read(64) != b"wisp web\n":
                problem = "something answers there, but not wisp web"
    except urllib.error.HTTPError as exc:
        problem = f"it answered HTTP {exc.code}, not wisp web"
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        problem = f"not reachable ({reason})"
    if problem is None:
        return [_check("web", base, "wisp web answers there", ok=True)]
    return [
        _check(
            "web",
            base,
            f"{problem}: a notification's link to a request's page would open nothing",
            ok=False,
            fix="start it (`wisp web`, wisp docs web), or set web.url to where your phone "
            'reaches it (`wisp config set web.url ""` for none)',
        )
    ]


def check_space(path: Path) -> dict[str, Any]:
    """Free space (and inodes) in the filesystem the channel lives on."""
    st = os.statvfs(path)
    free = st.f_bavail * st.f_frsize
    inodes = st.f_favail if st.f_files else None  # some filesystems count no inodes
    low = free < MIN_FREE_BYTES or (inodes is not None and inodes < MIN_FREE_INODES)
    detail = f"{_size(free)} free" + (f", {inodes} inodes free" if inodes is not None else "")
    return {
        **_check(
            "disk",
            path,
            detail,
            ok=not low,
            fix=None
            if not low
            else f"free some space on the filesystem of {path} (wisp needs at least "
            f"{_size(MIN_FREE_BYTES)} and {MIN_FREE_INODES} inodes): requests, answers and "
            "outcomes cannot be written when it is full",
        ),
        "freeBytes": free,
        "freeInodes": inodes,
    }


def _size(count: int) -> str:
    size = float(count)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TiB"  # pragma: no cover - the loop returns
