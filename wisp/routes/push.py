"""The push route: a notification for the person who is not at this machine, through Apprise.

`notifications.push` holds one or more Apprise URLs (``ntfy://…``, ``tgram://…``,
``pover://…``, ``json://…``: https://github.com/caronc/apprise/wiki). They are secrets — a
ntfy topic, a bot token, a webhook key — so nothing but :func:`redact`'s ``scheme://host`` is
ever written out (audit log, stderr, `wisp config`, `wisp doctor`), and Apprise's own log,
which names them, is kept quiet.

Apprise is an optional extra (``push``; :func:`push_install` names how to add it): only :func:`send`
imports it, so no everyday command loads it. Each target is sent to in a thread of its own,
all at once; one that has not answered within :data:`PUSH_TIMEOUT_S` is given up on (its
daemon thread ends with Apprise's own socket timeouts, or with the process) and reported
failed.

A push that nobody waits for (the one after filing a request) is sent by a process of its
own (:func:`send_later`, ``python -m wisp.routes.push``), which audits its outcome: the process
that files never waits for it, not even to exit — and a command that files and exits at
once could not push from a thread, for a Python that is exiting imports nothing more.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from pending import start_thread
from wisp.routes.route import Here, Notice, Posted
from wisp.routes.subproc import SAFE_CWD, child_env, python_module
from wisp.stores.pushurls import push_urls, redact

NAME = "push"

PUSH_TIMEOUT_S = 5.0  # a target that has not taken the message by then is given up on

# The services whose Apprise URL takes a link the notification opens when tapped, and a
# priority: scheme -> (the link's parameter, or None; the priority's parameter). A URL that
# sets either itself keeps its own.
LINKED: dict[str, tuple[str | None, str]] = {
    "ntfy": ("click", "priority"),
    "ntfys": ("click", "priority"),
    "pover": ("url", "priority"),
    "gotify": (None, "priority"),
    "gotifys": (None, "priority"),
}
HIGH = "high"  # the priority a request for the person is pushed with (each service's word)


@attrs.frozen(kw_only=True)
class Extras:
    """What a push carries besides its text, where its service takes them."""

    link: str | None = None  # the page a tap opens (`wisp web`'s page of the request)
    priority: str | None = None  # HIGH for a request waiting for the person

    def applied(self, url: str) -> str:
        """*url* with this push's link and priority as its service's parameters."""
        scheme = url.split("://", 1)[0].lower()
        names = LINKED.get(scheme)
        if names is None or (self.link is None and self.priority is None):
            return url
        from urllib.parse import parse_qsl, urlencode, urlsplit

        query = urlsplit(url).query
        present = {key for key, _ in parse_qsl(query, keep_blank_values=True)}
        link_name, priority_name = names
        added = []
        if self.link is not None and link_name is not None and link_name not in present:
            added.append((link_name, self.link))
        if self.priority is not None and priority_name not in present:
            added.append((priority_name, self.priority))
        if not added:
            return url
        head, _, fragment = url.partition("#")
        joined = head + ("&" if query else "?") + urlencode(added)
        return joined + (f"#{fragment}" if fragment else "")


def push_install() -> str:
    """The command that adds the extra bringing Apprise to this install (no index has
    wisp, so no bare `pip install` of its name)."""
    from wisp._errors import install_command

    return install_command("push")


def apprise_installed() -> bool:
    """Whether Apprise can be imported here (asked without importing it)."""
    return importlib.util.find_spec("apprise") is not None


@attrs.frozen(kw_only=True)
class Delivery:
    """What became of one push target."""

    target: str  # redacted
    posted: bool
    reason: str | None = None  # why it was not

    def record(self) -> dict[str, Any]:
        """As the audit log holds it."""
        out: dict[str, Any] = {
            "target": self.target,
            "outcome": "posted" if self.posted else "failed",
        }
        if self.reason:
            out["reason"] = self.reason
        return out


def send(
    urls: Sequence[str],
    title: str,
    body: str,
    *,
    extras: Extras = Extras(),  # frozen: one shared empty value is safe
    timeout_s: float = PUSH_TIMEOUT_S,
) -> list[Delivery]:
    """Send *title* and *body* to every URL at once, with *extras* where its service takes
    them; wait at most *timeout_s* for all of them (the clock starts once Apprise is loaded:
    loading it is local work, never a wait on the network). Never raises; one
    :class:`Delivery` per URL, in order."""
    try:
        apprise = _load_apprise()
    except ImportError:
        missing = f"Apprise is not installed ({push_install()})"
        return [Delivery(target=redact(url), posted=False, reason=missing) for url in urls]
    slots = [_Slot() for _ in urls]
    for url, slot in zip(urls, slots, strict=True):
        start_thread(
            threading.Thread(
                target=_send_one,
                args=(apprise, extras.applied(url), title, body, slot),
                name="wisp-push",
                daemon=True,
            )
        )
    deadline = time.monotonic() + timeout_s
    deliveries = []
    for url, slot in zip(urls, slots, strict=True):
        done = slot.done.wait(max(0.0, deadline - time.monotonic()))
        reason: str | None = slot.reason if done else f"did not answer within {timeout_s:g} s"
        deliveries.append(
            Delivery(target=redact(url), posted=done and reason is None, reason=reason)
        )
    return deliveries


def _load_apprise() -> Any:
    """Apprise, the optional extra (imported only to send), its log kept quiet: it names the
    URLs it sends to, secrets and all, so it goes nowhere (not to stderr through logging's
    last resort, nor to a host application's handlers)."""
    log = logging.getLogger("apprise")  # quiet before the import: importing it logs too
    with _QUIET_LOCK:
        if log.propagate:
            log.addHandler(logging.NullHandler())
            log.propagate = False
    import apprise

    # Apprise reads its ~220 plugin modules on the first URL it is given (measured: ~0.8 s at
    # a load of 10): read here, before a send's clock (PUSH_TIMEOUT_S) starts, so that a busy
    # machine's import is not counted against the push service (seen: tests/test_push.py
    # failing under a second suite's load, "did not answer within 5 s").
    try:
        from apprise.manager_plugins import NotificationManager
    except ImportError:  # an Apprise before its plugin manager loads them as it goes
        return apprise
    with warnings.catch_warnings():  # its modules' own (imghdr's deprecation), not ours
        warnings.simplefilter("ignore", DeprecationWarning)
        manager: Any = NotificationManager  # untyped
        manager().load_modules()
    return apprise


_QUIET_LOCK = threading.Lock()


def _asset(apprise: Any) -> Any:
    """Apprise's settings for one send: its own per-service time limit off. That limit runs
    the send on Apprise's shared pool of threads, which takes no work once the process has
    begun to exit, and a command that files and exits pushes just then; the limit that
    holds is this module's, PUSH_TIMEOUT_S. (An Apprise without the setting sends in the
    calling thread anyway.)"""
    try:
        return apprise.AppriseAsset(service_timeout=0)
    except (TypeError, AttributeError):
        return apprise.AppriseAsset()


class _Slot:
    """One target's outcome, set once by its sending thread."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.reason: str | None = "not sent"


def _send_one(apprise: Any, url: str, title: str, body: str, slot: _Slot) -> None:
    try:
        sender = apprise.Apprise(asset=_asset(apprise))
        if not sender.add(url):
            slot.reason = "Apprise does not take this URL (its wiki gives each service's form)"
        elif not sender.notify(body=body, title=title):
            # Apprise says why only in its log, which names the URL's secrets: not repeated.
            slot.reason = "not delivered (the service refused it or could not be reached)"
        else:
            slot.reason = None
    except Exception as exc:  # a plugin that breaks fails its own target, nothing else
        slot.reason = f"Apprise failed ({type(exc).__name__})"
    finally:
        slot.done.set()


def send_later(
    home: Path,
    urls: Sequence[str],
    title: str,
    text: str,
    *,
    record: Mapping[str, Any],
    entry_point: str,
    extras: Extras = Extras(),  # frozen: one shared empty value is safe
    say_failure: bool = False,
) -> None:
    """Push in a process of its own, which audits the outcome as a `notification` record
    with *record*'s fields. Returns at once. The job goes on the child's standard input
    (never its argv, which other users can read); its output goes nowhere (under MCP this
    process's stdout is the protocol), but with *say_failure* a push that failed is said in
    a line on this process's standard error, which the child shares (an asking command's:
    the person who asked learns that the notification did not go out)."""
    job = {
        "home": str(Path(home).absolute()),  # the child runs elsewhere (SAFE_CWD)
        "urls": list(urls),
        "title": title,
        "text": text,
        "record": dict(record),
        "entryPoint": entry_point,
        "link": extras.link,
        "priority": extras.priority,
        "sayFailure": say_failure,
    }
    # Never from the caller's directory, the agent's project: its import path is wisp's own.
    child = subprocess.Popen(
        python_module("wisp.routes.push"),
        cwd=SAFE_CWD,
        env=child_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=None if say_failure else subprocess.DEVNULL,
        start_new_session=True,  # a Ctrl-C meant for the asker does not stop its push
    )
    assert child.stdin is not None
    with child.stdin:
        child.stdin.write(json.dumps(job).encode())  # a few KiB: fits the pipe, never blocks
    # Reaped when it ends, so a long-lived asker (the MCP server) leaves no zombies.
    start_thread(threading.Thread(target=child.wait, name="wisp-push-reaper", daemon=True))


def outcome(deliveries: Sequence[Delivery]) -> tuple[str, str]:
    """A push's outcome (`posted`, `partly posted`, `failed`) and a clause saying it
    ("posted to …; failed: …")."""
    posted = [d.target for d in deliveries if d.posted]
    failed = [f"{d.target}: {d.reason}" for d in deliveries if not d.posted]
    parts = ([f"posted to {', '.join(posted)}"] if posted else []) + (
        [f"failed: {'; '.join(failed)}"] if failed else []
    )
    word = "posted" if not failed else ("partly posted" if posted else "failed")
    return word, "; ".join(parts)


def why_not(here: Here, *, forced: bool, deep: bool) -> str | None:
    if not push_urls(here.settings.get("notifications.push", [])):
        return "no push URL set (notifications.push)"
    if not apprise_installed():
        return f"Apprise is not installed ({push_install()})"
    return None


def post(here: Here, notice: Notice) -> Posted:
    """Send *notice* to every push URL, waiting at most the notifier's push timeout
    (:data:`PUSH_TIMEOUT_S`): failed unless a target took it; each target's delivery, and
    a clause saying what became of them ("posted to …; failed: …")."""
    title, text = here.push_message(notice, notice.about)
    urls = push_urls(here.settings.get("notifications.push", []))
    extras = here.push_extras(notice.about)
    deliveries = tuple(send(urls, title, text, extras=extras, timeout_s=here.push_timeout_s))
    clause = outcome(deliveries)[1]
    failed = None if any(d.posted for d in deliveries) else clause
    return Posted(failed=failed, detail=clause, deliveries=deliveries)


def _main() -> None:
    """The child of :func:`send_later`: send, then audit what became of it."""
    from wisp.audit.writer import AuditEvent, audit

    job = json.loads(sys.stdin.buffer.read())
    extras = Extras(link=job.get("link"), priority=job.get("priority"))
    deliveries = send(job["urls"], job["title"], job["text"], extras=extras)
    word, clause = outcome(deliveries)
    audit(
        Path(job["home"]),
        AuditEvent.NOTIFICATION,
        {
            **job["record"],
            "outcome": word,
            "route": "push",
            "detail": clause,
            "targets": [d.record() for d in deliveries],
        },
        entry_point=job["entryPoint"],
    )
    if job.get("sayFailure") and word != "posted":
        about = job["record"].get("id")
        what = f"the push about request {about}" if about else "the push"
        sys.stderr.write(
            f"wisp: {what} {word}: {clause}. `wisp doctor --send-test` tries the push "
            "route and says what is wrong.\n"
        )
        sys.stderr.flush()


if __name__ == "__main__":
    _main()
