"""The asking core: file a request, wait for the person by watchdog events, settle it.

:class:`Asker` is one asking server: it holds the server lock (so its requests read as alive)
and one watcher for all its waits, settles each answer the moment it is written, keeps each
request's deadline and follows what outlives it. Each kind's gate is handed an asker and
lives with its kind (`wisp.kinds`): :class:`~wisp.ApprovalGate` asks about commands and tool
calls, :class:`~wisp.QuestionAsker` asks questions, :class:`~wisp.FactKeeper` asks to keep
facts. They are for any Python program (an MCP server, an agent loop) and back
`wisp approvals request` and `wisp questions ask`.
"""

from __future__ import annotations

import heapq
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pending import (
    KINDS,
    SYSTEM_CLOCK,
    Binding,
    Channel,
    ChannelUnwritable,
    Clock,
    Kind,
    Outcome,
    PendingError,
    Request,
    Server,
    Settled,
    State,
    Status,
    UnknownRequest,
    Via,
    format_time,
    make_request,
    new_id,
    resource_shortage,
    settlement_for,
    signals_deferred,
    start_thread,
)
from wisp import _startup
from wisp._deadlines import Cancel, check_deadline
from wisp._errors import WispError
from wisp.audit.writer import (
    AuditEvent,
    EntryPoint,
    audit,
    check_log,
    ending_record,
    request_fields,
)
from wisp.kinds import notice_for, view
from wisp.kinds._asker import Applier, Ending, ending_of
from wisp.stores.jsonstore import StoreError

if TYPE_CHECKING:
    from pending import Subscription, Transition, Watcher
    from wisp.routes.notify import HeldPush, Notifier

_COMMANDS, _QUESTIONS = view(Kind.COMMAND), view(Kind.QUESTION)


class CannotFollow(WispError, PendingError):
    """A request was filed, but its asker could not start watching for its answer (no
    descriptor or thread left): it was withdrawn, and nothing waits for it. *shortage*: the
    resource limit that stopped it, and how to raise it (then the channel is not at fault);
    None when the channel itself may be."""

    def __init__(self, request_id: str, error: BaseException) -> None:
        shortage = resource_shortage(error)
        remedy = (
            f"Not the channel's fault: {shortage}."
            if shortage is not None
            else "Check the channel with `wisp doctor`, then ask again."
        )
        message = (
            f"request {request_id} was filed, but its answer cannot be watched for ({error}), "
            f"so it was withdrawn. {remedy}"
        )
        super().__init__(message, remedy=remedy)
        self.request_id = request_id
        self.shortage = shortage


class Deadlines:
    """The deadlines of one asker's requests, kept by one thread for them all.

    A thread per request (a ``threading.Timer`` each) costs a thread's start and its wake-ups
    on every request filed, which at hundreds of requests a second is a good part of filing
    one (measured: about 0.12 ms of CPU a request). One thread sleeps until the earliest
    deadline instead; a cancelled one is only forgotten (its heap entry is skipped when it
    comes up). The thread starts with the first deadline: an asker that sets none has none.
    A deadline that passes is kept on a thread of its own, so that no expiry waits for
    another.
    """

    def __init__(self, expire: Callable[[str], None]) -> None:
        self._expire = expire
        self._due: dict[str, float] = {}  # request ID -> its deadline (monotonic seconds)
        self._heap: list[tuple[float, str]] = []  # may hold cancelled entries: see _due
        self._changed = threading.Condition(threading.Lock())
        self._thread: threading.Thread | None = None
        self._stopped = False

    def add(self, request_id: str, seconds: float) -> None:
        """Call *expire(request_id)* once *seconds* have passed, unless cancelled first."""
        with self._changed:
            if self._stopped:
                return
            due = time.monotonic() + seconds
            self._due[request_id] = due
            heapq.heappush(self._heap, (due, request_id))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="asker-deadlines", daemon=True
                )
                start_thread(self._thread)
            elif self._heap[0] == (due, request_id):  # earlier than what the thread waits for
                self._changed.notify()

    def cancel(self, request_id: str) -> None:
        with self._changed:
            if self._due.pop(request_id, None) is None:
                return
            # Cancelled entries wait in the heap until they come up; if they come to outnumber
            # the live ones (a long deadline, many requests answered), rebuild it.
            if len(self._heap) > 2 * len(self._due) + 64:
                self._heap = [(due, rid) for rid, due in self._due.items()]
                heapq.heapify(self._heap)

    def stop(self) -> None:
        """Forget every deadline and end the thread (none fires after this returns, but one
        already firing may finish)."""
        with self._changed:
            self._stopped = True
            self._due.clear()
            self._heap.clear()
            self._changed.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _run(self) -> None:
        with self._changed:
            while not self._stopped:
                heap = self._heap
                while heap and self._due.get(heap[0][1]) != heap[0][0]:
                    heapq.heappop(heap)  # cancelled (or set again later)
                if not heap:
                    self._changed.wait()
                    continue
                due, request_id = heap[0]
                remaining = due - time.monotonic()
                if remaining > 0:
                    self._changed.wait(remaining)
                    continue
                heapq.heappop(heap)
                del self._due[request_id]
                # Each expiry on a thread of its own: it writes to the channel and audits
                # (fsyncs, the audit log's lock), and one held up there must not hold up the
                # other requests' deadlines. A thread is started only when a deadline passes.
                threading.Thread(
                    target=self._expire_one, args=(request_id,), name="asker-expire", daemon=True
                ).start()

    def _expire_one(self, request_id: str) -> None:
        try:
            self._expire(request_id)
        except Exception:  # a deadline that could not be kept is logged, never raised
            import logging

            logging.getLogger("wisp.asking").exception(
                "wisp asker: a request's deadline could not be kept"
            )


class Asker:
    """One asking server: its lock, its watcher, the requests it waits on.

    Every request it files is settled by this process as soon as its answer is written, by
    a thread that follows the watcher's transitions, whether or not anyone is in :meth:`wait`
    at that moment; its deadline (``expiresAt``) is a timer that claims `timed-out`. So a
    caller may file, return, and :meth:`wait` again later (the MCP server's tools do). A kind
    with an :class:`Applier` is settled by it, on the same thread; a request that outlives its
    server (``dies_with_server`` false in :data:`pending.KINDS`) is handed over when the asker
    stops, never withdrawn.

    *pumped*, for a program that waits on each request it files (a hook, a command): no thread
    of the asker's own reads or settles; its :meth:`wait` reads the channel's events itself
    (``Watcher(pumped=True)``) and settles on the waiting thread, with the main thread's
    ending signals deferred while it does. A request filed and not waited on is then settled
    by the next wait, or at :meth:`close`; its deadline is kept by the timer all the same.
    """

    def __init__(
        self,
        channel: Channel,
        *,
        entry_point: EntryPoint,
        client: str = "wisp",
        liveness_recheck_s: float = 1.0,
        on_warning: Callable[[str], None] | None = None,
        clock: Clock | None = None,
        notifier: Notifier | None = None,
        pumped: bool = False,
    ) -> None:
        """*notifier* announces each request filed; by default, this process's terminal
        routes with the settings in config.json. *pumped*: see the class."""
        self.channel = channel
        self.home: Path = channel.home
        self.entry_point = entry_point
        self.client = client
        self.clock = clock or channel.clock or SYSTEM_CLOCK
        self._notifier = notifier
        self._lock = channel.server().acquire()
        self._waiting: dict[str, Request] = {}
        self._deadlines = Deadlines(self._expire)
        # The pushes held back until their request has waited a while (`push_after_s`), each
        # sent by a deadline of its own if the request still waits then; its thread starts
        # with the first one held (an asker with no push set holds none).
        self._held: dict[str, HeldPush] = {}
        self._pushes = Deadlines(self._push_due)
        self._ended: dict[str, Ending] = {}
        # Taken by one thread to settle, not yet recorded.
        self._finishing: dict[str, Request] = {}
        self._appliers: dict[Kind, Applier] = {}
        self._mutex = threading.Lock()
        self._changed = threading.Condition(self._mutex)
        self._liveness_recheck_s = liveness_recheck_s
        self._on_warning = on_warning
        # The watch starts once the first request is out (see _watch): until then there is
        # nothing of ours to follow, and loading watchdog (~12-20 ms) before filing would
        # keep the person from seeing the request for that long.
        self._watch_lock = threading.Lock()
        self.watcher: Watcher | None = None
        self._subscription: Subscription[Transition] | None = None
        self._settler: threading.Thread | None = None
        self._stopped_watching = False  # closed: no watch starts any more
        self._pumped = pumped
        # Pumped: the IDs a transition may have ended, noted as the watcher emits it (on the
        # waiting thread, or the watcher's timer), settled by the waiter outside its lock.
        self._due: dict[str, None] = {}
        # Pumped: a thread is pumping the watcher (under _changed). Only one pumps; another
        # thread that waits sleeps on _changed, and takes over when the pumper is done.
        self._pumping = False

    @property
    def notifier(self) -> Notifier:
        """What announces each request filed: made when the first is (after it is published:
        the notifier's routes load ~10 ms of modules a filing need not wait for)."""
        if self._notifier is None:
            from wisp.routes.notify import default_notifier  # loaded once a request is filed

            self._notifier = default_notifier(self.home, self.entry_point)
        return self._notifier

    @property
    def server_id(self) -> str:
        return self._lock.id

    def apply_with(self, kind: Kind, applier: Applier) -> None:
        """Settle this asker's requests of *kind* by *applier* from now on (file none of that
        kind before: they would be settled by the one rule alone, and waited for)."""
        with self._mutex:
            self._appliers[kind] = applier

    def _audit(self, event: AuditEvent, request: Request, **fields: object) -> None:
        audit(
            self.home,
            event,
            {**request_fields(request), **fields},
            entry_point=self.entry_point,
            clock=self.clock,
        )

    # --- filing and waiting ----------------------------------------------------------------

    def file(
        self,
        kind: Kind,
        binding: Binding,
        *,
        title: str,
        body: Callable[[str], str],
        timeout_s: float,
        thread: str | None = None,
        on_filed: Callable[[Request], None] | None = None,
        push_after_s: float = 0.0,
    ) -> Request:
        """File a request and return at once; its answer is settled when it comes, and its
        deadline (*timeout_s*, 0 for none) is kept by a timer. *body* gets the request's ID.
        The routes here announce it at once; its push to the phone goes once it has waited
        *push_after_s* (0: at once), and never if it ended before. A deadline out of range
        raises :class:`wisp.DeadlineError`, before anything is filed."""
        check_deadline(timeout_s, what="timeout_s", zero="waits until answered")
        check_deadline(push_after_s, what="push_after_s", zero="pushed at once")
        check_log(self.channel.home)  # a FIFO or a stranger's log: refused before filing
        request_id = new_id()  # the body names it: made first, the request is built once
        request = make_request(
            kind=kind,
            binding=binding,
            title=title,
            body=body(request_id),
            server=self._server(thread),
            clock=self.clock,
            expires_in_s=timeout_s or None,
            request_id=request_id,
        )
        self.channel.file(request)
        _startup.resume()  # filed: this process now waits, and lives on (wisp._startup)
        with self._mutex:
            self._waiting[request.id] = request
            if timeout_s:
                # The deadline starts once the request is published: the asker's own deadline
                # is never earlier than expiresAt, so a sweep can't call it stale first.
                self._deadlines.add(request.id, timeout_s)
        self._audit(AuditEvent.APPROVAL_PENDING, request, expiresAt=_iso(request))
        if on_filed is not None:
            on_filed(request)
        self.announce(request, push_after_s=push_after_s)
        self._watch(request)
        # Answered before we took its events (they are taken once it waits and the watch is
        # on, above)? Never lost: its slots say. Only they are read: the request is the one
        # just published, and re-reading it (and every kind's name) cost each round trip a
        # parse and four system calls. Anything in a slot, junk included, is looked at in full.
        try:
            group, problems = self.channel.read_group(request.id, kinds=())
        except (OSError, PendingError):  # (a descriptor limit): the full look ends it failed
            self._settle_if_ended(request.id)
            return request
        if problems or group.answer is not None or group.settled is not None:
            with signals_deferred():  # settled on the caller's thread: never cut short
                self._settle_if_ended(request.id)
        return request

    def _watch(self, request: Request) -> None:
        """Start following this asker's requests, once: after the first is published, so
        that filing waits for no watchdog. Nothing is missed by starting late: events are only
        hints, and file() reads the request's slots once the subscription is taken. If the
        watch cannot start, *request* (just filed) is withdrawn, and :class:`CannotFollow` says
        why: nobody would see its answer."""
        if self._subscription is not None:
            return
        with self._watch_lock:
            if self._subscription is not None or self._stopped_watching:
                return
            from pending import Watcher  # a command that only lists or answers loads none

            try:
                # It follows only the requests filed through this channel (ours, and a
                # FactKeeper's on this asker): everyone else's events are not even read.
                watcher = Watcher(
                    self.channel,
                    liveness_recheck_s=self._liveness_recheck_s,
                    on_warning=self._on_warning,
                    only=self.channel.filed_ids.__contains__,
                    pumped=self._pumped,
                ).start()
            except (OSError, RuntimeError) as exc:  # no descriptor, no thread left
                self.withdraw(request.id)
                raise CannotFollow(request.id, exc) from None
            self.watcher = watcher
            if self._pumped:  # the waiter settles: nothing is queued, no thread started
                self._subscription, _ = watcher.subscribe(accept=self._note_due)
                return
            subscription, _ = watcher.subscribe(backlog=1024, accept=self._may_end)
            self._settler = threading.Thread(target=self._follow, name="asker-settle", daemon=True)
            self._subscription = subscription
            start_thread(self._settler)

    def wait(
        self, request_id: str, wait_s: float | None = None, *, cancel: Cancel | None = None
    ) -> Ending | None:
        """How the request ended; None if it still waits after *wait_s* seconds (None: until
        it ends) or *cancel* was cancelled. Raises UnknownRequest for one this asker did not
        file."""
        if cancel is not None:
            cancel.attach(self._changed, wake=self._wake_waiter if self._pumped else None)
        deadline = None if wait_s is None else self.clock.monotonic() + wait_s
        stopped = False  # its watcher stopped (the asker closing): woken as the threaded one is
        while True:
            self._settle_due()
            pumping = False
            try:
                with self._changed:
                    ending = self._ended.get(request_id)
                    filed = (
                        ending.request
                        if ending is not None
                        else self._waiting.get(request_id) or self._finishing.get(request_id)
                    )
                    if filed is None or filed.kind in self._appliers:  # applied kinds: never waited
                        raise UnknownRequest(request_id)
                    if ending is not None:
                        return ending
                    if cancel is not None and cancel.cancelled:
                        return None
                    remaining = None if deadline is None else deadline - self.clock.monotonic()
                    if remaining is not None and remaining <= 0:
                        return None
                    watcher = self.watcher if self._pumped and not stopped else None
                    if watcher is None or self._pumping:
                        self._changed.wait(remaining)
                        continue
                    pumping = True  # first: a Ctrl-C between the two leaves no pumper stuck
                    self._pumping = True
                # Pumped: events are read here. Anything that ends the request on another
                # thread (a deadline, a withdrawal) or cancels the wait wakes the pump.
                stopped = not watcher.pump(remaining)
            finally:
                if pumping:
                    self._pumped_done()

    def ask(
        self,
        kind: Kind,
        binding: Binding,
        *,
        title: str,
        body: Callable[[str], str],
        timeout_s: float,
        thread: str | None = None,
        on_filed: Callable[[Request], None] | None = None,
    ) -> Ending:
        """File a request and wait until it ends: the person's answer (checked and settled),
        or the deadline (`timed-out`), or a withdrawal. *body* gets the request's ID."""
        request = self.file(
            kind,
            binding,
            title=title,
            body=body,
            timeout_s=timeout_s,
            thread=thread,
            on_filed=on_filed,
        )
        ending = self.wait(request.id)
        assert ending is not None  # no wait limit: only an ending returns
        return ending

    def waiting(self) -> list[Request]:
        """The requests this asker filed that have not ended, oldest first (those of a kind
        with an applier left out: nobody waits for them)."""
        with self._mutex:
            return [r for r in self._waiting.values() if r.kind not in self._appliers]

    def _may_end(self, transition: Transition) -> bool:
        """Whether *transition* (on the watcher's thread) may end a request this asker waits
        on: one of its own, still waiting, with something in its slot or gone. The rest
        (its requests filed, others' and ended ones' transitions) would only wake the settler
        for nothing. One that comes before file() has registered its request is dropped too:
        file() looks at the request itself once it has."""
        if transition.id not in self._waiting:
            return False
        status = transition.status
        return status is None or status.answer is not None or status.settled is not None

    def _note_due(self, transition: Transition) -> bool:
        """Pumped: note a transition that may end a waiting request (on the watcher's
        thread, under its lock: quick), for the waiter to settle. Nothing is queued."""
        if self._may_end(transition):
            self._due[transition.id] = None
        return False

    def _settle_due(self) -> None:
        """Pumped: settle what the watcher noted, on this (the waiting) thread, the main
        thread's ending signals deferred: a Ctrl-C never lands between an answer taken and
        its ending recorded."""
        if not self._due:
            return
        with signals_deferred():
            while self._due:
                try:
                    request_id, _ = self._due.popitem()
                except KeyError:  # taken by another waiter just now
                    break
                self._settle_if_ended(request_id)

    def _catch_up(self) -> None:
        """Pumped: read the events already there (never waiting) and settle what they end
        (unless another thread pumps: then it does)."""
        watcher = self.watcher if self._pumped else None
        if watcher is not None:
            mine = False
            try:
                with self._changed:
                    if not self._pumping:
                        mine = True  # first: a Ctrl-C between the two leaves no pumper stuck
                        self._pumping = True
                if mine:
                    watcher.pump(0)
            finally:
                if mine:
                    self._pumped_done()
        self._settle_due()

    def _pumped_done(self) -> None:
        """Give up pumping: a thread waiting on _changed meanwhile takes over."""
        with self._changed:
            self._pumping = False
            self._changed.notify_all()

    def _wake_waiter(self) -> None:
        """Pumped: end a waiter's pump (an ending recorded, a wait cancelled)."""
        watcher = self.watcher
        if watcher is not None:
            watcher.wake()

    def _follow(self) -> None:
        """Settle each of our requests as soon as its slot is decided (events are hints)."""
        from pending import Transition

        assert self._subscription is not None  # started by _watch, with the subscription
        for item in self._subscription:
            if isinstance(item, Transition):
                # Only transitions that may end a waiting request come (_may_end): an
                # answer, an outcome or a removal, re-read here. One with nothing in its slot
                # (filed, stale) would find nothing the watcher had not just read.
                if item.id in self._waiting:
                    self._settle_if_ended(item.id)
                continue
            for request_id in list(self._waiting):  # missed events: look at all of ours
                self._settle_if_ended(request_id)

    def _expire(self, request_id: str) -> None:
        """The deadline passed: claim the slot `timed-out`. A person's answer that got there
        first stands. If the slot cannot be written, the request has timed out all the same
        for this process (nothing approves it), and the ending says it was not recorded."""
        request = self._waiting.get(request_id)
        if request is None:
            return
        try:
            self.channel.claim(request, Outcome.TIMED_OUT, via=Via.ASKER)
        except (OSError, PendingError) as exc:
            self._settle_if_ended(request_id)  # a slot decided before ours failed ends it
            self._end_unrecorded(
                request,
                Outcome.TIMED_OUT,
                f"it timed out, but that could not be recorded: {exc}",
                error=exc if isinstance(exc, ChannelUnwritable) else None,
            )
            return
        self._settle_if_ended(request_id)

    def _settle_if_ended(self, request_id: str) -> None:
        """Finish *request_id* if its slot is decided. Never raises: a channel that cannot be
        read or written ends it `failed` (a command is then not approved)."""
        request = self._waiting.get(request_id)
        if request is None:
            return
        try:
            group, problems = self.channel.read_group(request_id, kinds=(request.kind,))
        except (OSError, PendingError) as exc:
            self._finish(request, None, failure=f"its files could not be read: {exc}")
            return
        if problems:  # junk in our slots (or our request altered): nothing is acted on
            problem = problems[0]
            self._finish(
                request,
                None,
                failure=(
                    f"{problem.name} cannot be read safely ({problem.reason}), so no answer "
                    "to it can be taken, and none was acted on. Remove that file if you did "
                    "not put it there, and ask again."
                ),
            )
            return
        if group.request is None:
            self._finish(request, None, failure=f"request {request_id} was removed")
            return
        if (group.request.binding_digest, group.request.binding) != (
            request.binding_digest,
            request.binding,
        ):
            self._finish(
                request,
                None,
                failure=(
                    f"request {request_id} was changed after it was filed: it no longer says "
                    "what was asked, so no answer to it is applied"
                ),
            )
            return
        status = self.channel.derive(group)
        if status is not None and (status.settled is not None or status.answer is not None):
            self._finish(request, status)

    def _take(self, request_id: str) -> bool:
        """Whether this caller is the one to finish *request_id* (only one ever is)."""
        with self._mutex:
            request = self._waiting.pop(request_id, None)
            if request is None:
                return False
            self._finishing[request_id] = request
            held = self._held.pop(request_id, None)
        self._deadlines.cancel(request_id)
        if held is not None:
            self._pushes.cancel(request_id)
        return True

    def _untake(self, request: Request) -> None:
        """Put back a request taken to finish that could not be: it waits again (an applied
        kind's, which has no deadline to restore)."""
        with self._mutex:
            self._finishing.pop(request.id, None)
            self._waiting[request.id] = request

    def _forget(self, request_id: str) -> None:
        """Done with a request taken to finish, keeping no ending (none is waited for)."""
        with self._changed:
            self._finishing.pop(request_id, None)
            self._changed.notify_all()
        if self._pumped:
            self._wake_waiter()

    def _record(self, ending: Ending) -> Ending:
        with self._changed:
            self._ended[ending.request.id] = ending
            self._finishing.pop(ending.request.id, None)
            self._changed.notify_all()
        self._unfollow(ending.request.id)
        if self._pumped:
            self._wake_waiter()
        return ending

    def _unfollow(self, request_id: str) -> None:
        """Ended here: nothing more of *request_id* is this asker's concern. Its watcher stops
        following it and forgets it: a long-lived asker's would otherwise keep, and re-read at
        every rescan, each request it ever filed; and a pumped asker, which reads its events
        only as it waits, never reads its own outcome's (a third of what it heard a trip)."""
        self.channel.filed_ids.discard(request_id)
        watcher = self.watcher
        if watcher is not None:
            watcher.forget(request_id)

    def _finish(
        self, request: Request, status: Status | None, *, failure: str | None = None
    ) -> Ending | None:
        """Settle what the slot decided (first outcome wins) and report it."""
        if not self._take(request.id):
            return None
        applier = self._appliers.get(request.kind)
        if applier is not None and status is not None:
            return self._apply(applier, request, status)
        try:
            if status is None:
                settled = self.channel.settle(
                    request, Outcome.FAILED, by=Via.ASKER, reason=failure
                ).settled
                answer = None
            else:
                answer = status.answer
                settled = status.settled or self._settle(request, status)
        except (OSError, PendingError) as exc:
            reason = f"{failure}; and its outcome could not be recorded" if failure else None
            return self._record(
                Ending(
                    request=request,
                    outcome=Outcome.FAILED,
                    reason=f"{reason or 'its outcome could not be recorded'}: {exc}",
                    error=exc if isinstance(exc, ChannelUnwritable) else None,
                )
            )
        ending = ending_of(request, settled, answer)
        event, fields = ending_record(ending.outcome, ending.decision, ending.reason)
        self._audit(event, request, **fields, answerText=answer.text if answer else None)
        return self._record(ending)

    def _apply(self, applier: Applier, request: Request, status: Status) -> Ending | None:
        """Settle an answer by its kind's applier, which audits what it does."""
        try:
            settled = applier.apply(request, status)
        except (StoreError, PendingError, OSError):
            # Left answered (a store or channel that cannot be written, a slot turned to
            # junk): tried again on its next event, or handed over when this asker stops.
            self._untake(request)
            return None
        self._forget(request.id)  # nobody waits for an applied kind: no ending is kept
        self._unfollow(request.id)
        return ending_of(request, settled, status.answer)

    def _settle(self, request: Request, status: Status) -> Settled:
        """Settle what the slot decided, by the one rule (:func:`pending.settlement_for`),
        checking the answer against the request as this asker filed it: what is applied is
        what it asked, whatever the file says now."""
        assert status.answer is not None
        settlement = settlement_for(request, status.answer)
        return self.channel.settle_with(request, settlement, by=Via.ASKER).settled

    def _end_unrecorded(
        self,
        request: Request,
        outcome: Outcome,
        reason: str,
        *,
        error: ChannelUnwritable | None = None,
    ) -> Ending | None:
        """End *request* for this process without an outcome on disk (the channel could not
        be written), unless another thread has ended it already. A command is then not
        approved; the request reads stale once this asker stops, and a sweep settles it."""
        if not self._take(request.id):
            return None
        return self._record(Ending(request=request, outcome=outcome, reason=reason, error=error))

    def announce(self, request: Request, *, push_after_s: float = 0.0) -> None:
        """Post the notification for a request just filed (source `approval` for commands and
        facts, `inquiry` for questions), its push held back *push_after_s* (a deadline of
        this asker's: :meth:`_push_due`). A notifier that cannot post changes nothing."""
        title, message, subtitle, about, source = notice_for(request)  # worded in one place
        result = self.notifier.post(
            title, message, subtitle=subtitle, source=source, about=about, push_after_s=push_after_s
        )
        if result.held is None:
            return
        with self._mutex:
            if request.id not in self._waiting:  # ended already (answered at once): no push
                return
            self._held[request.id] = result.held
        self._pushes.add(request.id, push_after_s)

    def _push_due(self, request_id: str) -> None:
        """A held push's deadline passed: sent if its request still waits (an answer, a
        time-out or a withdrawal before it took it away: :meth:`_take`)."""
        with self._mutex:
            held = self._held.pop(request_id, None)
            if held is None or request_id not in self._waiting:
                return
        self.notifier.push_held(held)

    def _server(self, thread: str | None) -> Server:
        return self._lock.record(client=self.client, thread=thread, entry_point=self.entry_point)

    def hand_over(self, kind: Kind | None = None) -> list[Request]:
        """Stop following the waiting requests that outlive their server (of *kind*, or all):
        they are handed over to whichever process the person answers in, which applies the
        answer (`delivery: applied`). Each is audited `approval.settled` with outcome
        `handed-over` (the state it is left in: no outcome ends it). Returns them. Pumped,
        the events already there are read first: an answer that came is applied, as the
        settler thread would have applied it, not handed over."""
        self._catch_up()
        with self._mutex:
            targets = [
                r
                for r in self._waiting.values()
                if not KINDS[r.kind].dies_with_server and kind in (None, r.kind)
            ]
        handed = []
        for request in targets:
            if not self._take(request.id):
                continue  # its answer is being settled right now: it is not handed over
            self._forget(request.id)
            self._audit(AuditEvent.APPROVAL_SETTLED, request, outcome=State.HANDED_OVER)
            handed.append(request)
        return handed

    def withdraw(self, request_id: str | None = None, *, thread: str | None = None) -> list[Ending]:
        """Withdraw waiting requests — one, a closing thread's, or all: claim each slot
        `withdrawn` and settle it. A person's answer that got there first stands. Fact
        requests are never withdrawn: they are handed over."""
        with self._mutex:
            targets = [
                r
                for i, r in self._waiting.items()
                if request_id in (None, i) and thread in (None, r.server.thread)
            ]
        endings = []
        for request in targets:
            if not KINDS[request.kind].dies_with_server:
                continue  # a fact request outlives its server: it is handed over
            try:
                self.channel.claim(
                    request, Outcome.WITHDRAWN, via=Via.ASKER, reason="the asker stopped waiting"
                )
            except (OSError, PendingError) as exc:
                self._settle_if_ended(request.id)  # a slot decided before ours failed ends it
                self._end_unrecorded(
                    request,
                    Outcome.WITHDRAWN,
                    f"withdrawn, but that could not be recorded: {exc}",
                    error=exc if isinstance(exc, ChannelUnwritable) else None,
                )
            else:
                self._settle_if_ended(request.id)
            ending = self.wait(request.id)  # settled here, or by the settler thread just now
            if ending is not None:
                endings.append(ending)
        return endings

    def close(self) -> None:
        """A clean stop: hand over what outlives its server, withdraw the rest of what
        waits, stop watching, release the lock."""
        try:
            self.hand_over()
            self.withdraw()
        finally:
            self._deadlines.stop()
            self._pushes.stop()
            with self._watch_lock:  # no watch starts after this
                watcher, subscription, settler = self.watcher, self._subscription, self._settler
                self._stopped_watching = True
            if watcher is not None and subscription is not None:
                watcher.unsubscribe(subscription)
                subscription.close()
                if settler is not None and settler is not threading.current_thread():
                    settler.join()
                watcher.stop()
            self._lock.release()

    def __enter__(self) -> Asker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _iso(request: Request) -> str | None:
    return format_time(request.expires_at) if request.expires_at else None
