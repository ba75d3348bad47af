"""The channel directory and its transitions (I/O over the pure core)."""

from __future__ import annotations

import functools
import operator
import os
import pwd
import stat
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any, NamedTuple, TypeVar

from pending._bindings import Binding, QuestionBinding, ToolBinding
from pending._clock import SYSTEM_CLOCK, Clock, record_time
from pending._convert import (
    binding_digest,
    from_json,
    is_legacy,
    legacy_request,
    to_json,
)
from pending._dirs import PENDING_DIR as PENDING_DIR
from pending._dirs import SERVERS_DIR as SERVERS_DIR
from pending._dirs import TMP_DIR as TMP_DIR
from pending._errors import (
    AlreadyAnswered,
    AlreadySettled,
    ChannelUnwritable,
    IdCollision,
    InvalidDecision,
    InvalidId,
    PendingError,
    RecordTooLarge,
    RequestChanged,
    StaleRequest,
    UnknownRequest,
    UnreadableRequest,
    WrongKind,
)
from pending._fsio import (
    MAX_RECORD_BYTES,
    Published,
    Unreadable,
    entry_problem,
    list_dir,
    open_checked,
    open_private_dir,
    publish,
    read_fd,
    remove,
    stat_checked,
)
from pending._ids import (
    ANSWER_SUFFIX,
    SETTLED_SUFFIX,
    SLOT_BY_SUFFIX,
    NameVerdict,
    Slot,
    answer_name,
    name_id,
    new_id,
    parse_name,
    request_name,
    settled_name,
    validate_id,
)
from pending._json import DecodeError, digest, dumps_record, loads_strict
from pending._kinds import (
    BINDING_TYPES,
    DECISIONS,
    KIND_BY_SUFFIX,
    KINDS,
    REQUEST_SUFFIX,
    TOMBSTONES,
    VIA_SWEEP,
    Delivery,
    Kind,
    Outcome,
    State,
)
from pending._liveness import (
    Liveness,
    ServerLock,
    pid_alive,
    remove_if_free,
    request_liveness,
    server_alive,
)
from pending._records import (
    Answer,
    AnswerResult,
    Group,
    Problem,
    Request,
    Server,
    Settled,
    SettleResult,
    Status,
    from_fields,
)
from pending._state import (
    Settlement,
    decision_problem,
    derive_status,
    ending_of,
    needs_liveness,
    settlement_for,
)
from pending._sweep import SETTLED_GRACE_S, SweepAction, SweepStep, plan_sweep

R = TypeVar("R", Request, Answer, Settled)
# One pass over the directory: every ID's group, and every entry that could not be read.
Scanned = tuple[tuple[Group, ...], tuple[Problem, ...]]


# Parsed requests kept for re-reading by identity (a watcher re-reads one on every event): at
# least this many, and room for every ID the last scan found besides, so that a second pass
# over a large channel (a watcher's, a sweep's) finds them all rather than evicting each
# before it is asked for again.
REQUEST_CACHE_SIZE = 4096
# A writer holds a temp file for milliseconds; one an hour old belongs to a crashed writer.
STALE_TMP_AFTER_S = 3600.0


_BY_ID = operator.attrgetter("id")
_BY_FILING = operator.attrgetter("request.filed_at")

# How many answers and outcomes a Channel object keeps, the last it read or published (see
# Channel._slots).
SLOTS_KEPT = 64


def _file_key(st: os.stat_result) -> tuple[int, ...]:
    """A published file's identity: ctime is in it because a writer can put mtime back, not
    ctime, so an edit in place changes it."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


# The ctime of a key taken from a file this process is still publishing (staged, not yet
# linked): its link and the staged name's removal change the ctime, so until publish() gives
# the final one a key with this ctime matches on the rest. The window is this process's own
# link, unlink and directory fsync; an edit in place then is what the final key can't see
# either.
_CTIME_TO_COME = -1


def _staged_key(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, _CTIME_TO_COME)


def _read_key(st: os.stat_result) -> tuple[int, ...]:
    """The key of a file read now: its identity (:func:`_file_key`), or, while it has a second
    name, one with its ctime to come. Another process's publication is read on its event,
    which comes at its link, while the staged name is still there: the publisher's removal
    of that name changes the ctime a moment later, so a key with it would never match again
    and the next read (an asker settling the answer its watcher has just read, an answerer
    answering the request its watcher has just read) would parse the file a second time. The
    first read once the file has one name gives the kept key its ctime (`_still_kept`)."""
    return _file_key(st) if st.st_nlink == 1 else _staged_key(st)


def _same_file(kept: tuple[int, ...], key: tuple[int, ...]) -> bool:
    """Whether *key* (a file read now) is the file *kept* was taken from, unchanged."""
    return kept == key or (kept[4] == _CTIME_TO_COME and kept[:4] == key[:4])


def _whole_ms(moment: datetime) -> bool:
    return moment.microsecond % 1000 == 0


def _within_cap(data: bytes, what: str) -> bytes:
    """*data*, if every reader will read it back (under the record cap); else
    :class:`RecordTooLarge`, before anything is published."""
    if len(data) > MAX_RECORD_BYTES:
        raise RecordTooLarge(what, len(data), MAX_RECORD_BYTES)
    return data


def _login_name() -> str:
    """This process's user, as an answer records it (the uid where no name is known)."""
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return str(os.getuid())


def _writer_alive(staged: str) -> bool:
    """Whether the process that staged *staged* (`NAME.PID.TOKEN.tmp`) still lives."""
    parts = staged.split(".")
    if len(parts) < 4 or parts[-1] != "tmp" or not parts[-3].isdigit():
        return False  # not a name publication stages: nobody's
    return pid_alive(int(parts[-3]))


def make_request(
    *,
    kind: Kind,
    binding: Binding,
    title: str,
    body: str,
    server: Server,
    clock: Clock = SYSTEM_CLOCK,
    expires_in_s: float | None = None,
    request_id: str | None = None,
) -> Request:
    """A new request, its digest computed from the binding exactly as it will be written."""
    if not isinstance(binding, BINDING_TYPES[kind]):
        raise TypeError(f"a {kind} request needs a {BINDING_TYPES[kind].__name__}")
    now = record_time(clock)
    return Request(
        id=validate_id(request_id) if request_id else new_id(),
        kind=kind,
        filed_at=now,
        expires_at=None if expires_in_s is None else now + timedelta(seconds=expires_in_s),
        server=server,
        title=title,
        body=body,
        binding=binding,
        binding_digest=binding_digest(binding),
    )


class Listing(NamedTuple):
    """What the channel holds: a status per readable request, and every entry it skipped."""

    statuses: tuple[Status, ...]
    problems: tuple[Problem, ...]


class SweptEnding(NamedTuple):
    """A request this sweep ended: the outcome it wrote (it won the write: nobody else wrote
    this request's outcome), for the application to audit, once, as every ending is."""

    request: Request
    settled: Settled


class SweepReport(NamedTuple):
    """What a sweep did, and what it left for someone else."""

    stale: tuple[str, ...] = ()  # waiting requests found stale, claimed and settled `stale`
    finished: tuple[str, ...] = ()  # decided slots (a crashed claimer's, a dead asker's) settled
    removed: tuple[str, ...] = ()  # ended groups past the grace period, removed
    temp_files: int = 0  # staged files a crashed writer left
    locks: int = 0  # lock files of servers that died
    # Answered facts whose server is gone, still to be applied. The channel applies nothing:
    # the application's sweep applies them, moves each it applied to `applied`, and leaves
    # here only those it could not.
    awaiting: tuple[Status, ...] = ()
    applied: tuple[str, ...] = ()  # answered facts applied (kept or dropped) by this sweep
    problems: tuple[Problem, ...] = ()  # entries left alone because they could not be read
    # Writes that failed (a full disk, a read-only mount, …), each message naming the path and
    # what to do. The sweep stops writing at the first: what it left is done by a later one.
    errors: tuple[str, ...] = ()
    # The outcomes this sweep wrote (of `stale` and `finished`), each with its request: only
    # the ones it won, so of several sweeps racing over one request exactly one reports it.
    endings: tuple[SweptEnding, ...] = ()


class Channel:
    """One user's pending channel: `$WISP_HOME/pending/`.

    Open it with :meth:`open`; it holds descriptors of its directories until :meth:`close`.
    """

    def __init__(
        self,
        home: Path,
        *,
        clock: Clock = SYSTEM_CLOCK,
        user: str | None = None,
        keep_requests: bool = True,
    ) -> None:
        self.home = home
        self.path = home / PENDING_DIR
        self.clock = clock
        self.user = user if user is not None else _login_name()
        self._fds: list[int] = []
        self._requests: OrderedDict[str, tuple[tuple[int, ...], Request]] = OrderedDict()
        self._keep_requests = keep_requests
        self._cache_limit = REQUEST_CACHE_SIZE
        # The answers and outcomes this Channel object last read or published, by name, with
        # the file's identity then: one is read again at once (an asker's watcher reads the
        # answer, then its settler; a process's own watcher reads what it just published),
        # and that read parses nothing. Published files are never edited; an edit in place
        # changes the identity (see _file_key), and the file is read afresh.
        self._slots: dict[str, tuple[tuple[int, ...], Answer | Settled]] = {}
        # The IDs this Channel object filed (added before each is published), so that an
        # asker's watcher can follow its own requests and ignore everyone else's.
        self.filed_ids: set[str] = set()
        self._cache_lock = threading.Lock()  # a channel is shared by a watcher's threads
        try:
            home_fd = self._keep(open_private_dir(str(home)))
            self.dir_fd = self._keep(
                open_private_dir(str(self.path), parent_fd=home_fd, name=PENDING_DIR)
            )
            self.tmp_fd = self._keep(
                open_private_dir(str(self.path / TMP_DIR), parent_fd=self.dir_fd, name=TMP_DIR)
            )
            self.servers_fd = self._keep(
                open_private_dir(
                    str(self.path / SERVERS_DIR), parent_fd=self.dir_fd, name=SERVERS_DIR
                )
            )
        except BaseException:
            self.close()
            raise

    @classmethod
    def open(
        cls,
        home: Path | str,
        *,
        clock: Clock = SYSTEM_CLOCK,
        user: str | None = None,
        keep_requests: bool = True,
    ) -> Channel:
        """Open (creating, 0700) the channel `HOME/pending`, refusing unsafe directories.
        Which home is the application's choice (wisp: `$WISP_HOME`); *user* is the name its
        answers record (default: this process's login name).

        *keep_requests*: keep each request read or published, by its file's identity, so
        that reading that file again parses nothing: what a process that reads the same
        files over and over wants (a watcher, a face, an asker). False for one that reads
        each file once and is done (a listing that then exits): keeping 10,000 requests cost
        ~1.2 µs each, ~5 % of `wisp pending --json`'s time at 10,000 (bench/README.md)."""
        return cls(Path(home), clock=clock, user=user, keep_requests=keep_requests)

    def _keep(self, fd: int) -> int:
        self._fds.append(fd)
        return fd

    def close(self) -> None:
        while self._fds:
            os.close(self._fds.pop())

    def __enter__(self) -> Channel:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # --- liveness ------------------------------------------------------------------------

    def server(self, server_id: str | None = None) -> ServerLock:
        """A lock for an asking process; hold it (``with``) for as long as it may be answered."""
        return ServerLock(self.servers_fd, server_id, shown=str(self.path / SERVERS_DIR))

    def server_alive(self, server_id: str) -> bool:
        """Whether the server with this ID holds its lock. False for a string that is not an
        ID: no lock can be named after it, so nobody can hold one."""
        try:
            return server_alive(self.servers_fd, server_id)
        except InvalidId:
            return False

    def liveness(self, request: Request) -> Liveness:
        """Whether the process that filed *request* lives: its lock is held; for a legacy
        request without a lock, its pid exists (a reused pid errs towards alive); for one
        naming neither, :attr:`Liveness.UNKNOWN`."""
        return request_liveness(self.servers_fd, request)

    def request_alive(self, request: Request) -> bool:
        """Whether *request*'s asker may still act on it: alive, or (a legacy request
        naming no asker) not known to be gone. Nothing is given up on a guess."""
        return self.liveness(request) is not Liveness.GONE

    @staticmethod
    def alive_key(request: Request) -> str:
        """The key of *request*'s liveness in a cache of :meth:`derive`'s: its server's ID;
        for a legacy request (judged otherwise), its server and pid marked as such."""
        server = request.server
        return f"legacy:{server.id}:{server.pid}" if request.legacy else server.id

    # --- reading -------------------------------------------------------------------------

    def _read_record(self, name: str, cls: type[R], request_id: str) -> R | None:
        """One record, None if absent; raises :class:`Unreadable` with the reason."""
        kept = self._still_kept(name, cls)
        if kept is not None:
            return kept
        opened = open_checked(self.dir_fd, name)
        if opened is None:
            return None
        fd, st = opened
        # Published files are never edited, so a record already parsed is reused while its
        # identity holds (_still_kept, above): the key it is kept by is taken here. ctime is in
        # it because a writer can put mtime back, not ctime: an edit in place changes the key,
        # and the file is read (and refused) afresh. A channel that keeps no requests (see
        # open()) takes no key for one: none is looked up or kept.
        key = None if cls is Request and not self._keep_requests else _read_key(st)
        try:
            data = read_fd(fd)
        finally:
            os.close(fd)
        try:
            raw = loads_strict(data)
            record: R
            if cls is Request and is_legacy(raw):
                legacy: Any = self._legacy(raw, name, st)  # R is Request here
                record = legacy
            else:
                record = from_json(raw, cls)
        except DecodeError as exc:
            raise Unreadable(str(exc)) from None
        if record.id != request_id:
            raise Unreadable(f"its id {record.id!r} does not match its name")
        if isinstance(record, Request):
            # The name was built from (or parsed as) the validated ID and a request suffix.
            if KIND_BY_SUFFIX.get(name[len(request_id) :]) is not record.kind:
                raise Unreadable(f"its kind {record.kind!r} does not match its name")
            if record.binding_digest != digest(raw["binding"]):
                raise Unreadable(
                    "its binding does not match its bindingDigest: altered after filing"
                )
            if key is not None:
                self._keep_request(name, key, record)
        elif key is not None:  # always, for an answer or an outcome
            self._keep_slot(name, key, record)
        return record

    def _still_kept(self, name: str, cls: type[R]) -> R | None:
        """The record kept for *name*, if the file there is still the one it was kept from;
        else None (the caller opens and reads it). Asked by name (an lstat), not by opening it:
        what an event names is most often a file this process has just published or read
        (its own request, answer or outcome, or the request it answers), and open, fstat and
        close were three system calls where one says as much. Whatever the name holds now
        that open_checked would refuse, or a file other than the kept one, is read in full."""
        if cls is Request and not self._keep_requests:
            return None
        cache: dict[str, tuple[tuple[int, ...], Any]] = (
            self._requests if cls is Request else self._slots
        )
        with self._cache_lock:
            cached = cache.get(name)
        if cached is None or (cls is not Request and type(cached[1]) is not cls):
            return None
        st = stat_checked(self.dir_fd, name)
        if st is None:
            return None  # absent, or whatever it is: open_checked says
        key = _read_key(st)
        if not _same_file(cached[0], key):
            return None
        with self._cache_lock:
            if cache.get(name) is not cached:
                return None  # replaced meanwhile: read in full
            if cls is Request:
                self._requests.move_to_end(name)  # least recently used goes first
            if cached[0] != key:  # kept with its ctime to come: it has come
                cache[name] = (key, cached[1])
        return cached[1]  # type: ignore[no-any-return]

    def _keep_slot(self, name: str, key: tuple[int, ...], record: Answer | Settled) -> None:
        with self._cache_lock:
            self._slots.pop(name, None)  # kept as the newest
            self._slots[name] = (key, record)
            while len(self._slots) > SLOTS_KEPT:
                del self._slots[next(iter(self._slots))]  # the oldest first

    def _keep_request(self, name: str, key: tuple[int, ...], request: Request) -> None:
        with self._cache_lock:
            self._requests[name] = (key, request)
            self._requests.move_to_end(name)
            while len(self._requests) > self._cache_limit:
                self._requests.popitem(last=False)

    def _published_as(self, name: str, record: Request | Answer | Settled) -> Published | None:
        """What :func:`publish` tells as *record* is published as *name* (before the link,
        and once done): it is kept by the file's identity, as if read back, so that reading
        that file again (this process's own watcher, on its event) parses nothing. None for a
        record that reading back would not give exactly (a time finer than the milliseconds
        records keep, a tool call's input, which JSON may change, a record carrying unknown
        keys): that one is read."""
        if record.extra:
            return None
        if isinstance(record, Request):
            if (
                not self._keep_requests
                or record.legacy
                or isinstance(record.binding, ToolBinding)
                or (
                    isinstance(record.binding, QuestionBinding)
                    and not isinstance(record.binding.options, tuple | None)
                )
                or record.binding.extra
                or record.server.extra
                or not _whole_ms(record.filed_at)
                or (record.expires_at is not None and not _whole_ms(record.expires_at))
            ):
                return None
        elif not _whole_ms(record.answered_at if isinstance(record, Answer) else record.settled_at):
            return None
        return functools.partial(self._published, name, record)

    def _published(
        self,
        name: str,
        record: Request | Answer | Settled,
        st: os.stat_result | None,
        final: bool,
    ) -> None:
        """A :data:`Published` for *record* under *name*: kept, or forgotten."""
        if st is not None:
            key = _file_key(st) if final else _staged_key(st)
            if isinstance(record, Request):
                self._keep_request(name, key, record)
            else:
                self._keep_slot(name, key, record)
            return
        cache: dict[str, tuple[tuple[int, ...], Any]] = (
            self._requests if isinstance(record, Request) else self._slots
        )
        with self._cache_lock:  # not published, or no longer there: forget what was staged
            kept = cache.get(name)
            if kept is not None and kept[1] is record:
                del cache[name]

    @staticmethod
    def _legacy(raw: Any, name: str, st: os.stat_result) -> Request:
        """An earlier build's request (no `format`), read leniently: its kind from its name,
        its filing time from the file's."""
        _, parsed = parse_name(name)
        if parsed is None or parsed.kind is None:
            raise DecodeError("its name is not a request's")
        return legacy_request(
            raw, kind=parsed.kind, file_time=datetime.fromtimestamp(st.st_mtime, UTC)
        )

    def read_group(
        self,
        request_id: str,
        names: Collection[str] | None = None,
        kinds: Collection[Kind] | None = None,
    ) -> tuple[Group, tuple[Problem, ...]]:
        """The files of one ID as they are now, and the ones that could not be read.

        *names*, if given, are the only file names to try (those a listing of the directory
        found); *kinds* are the request kinds to look for (default: all; ``()`` reads only the
        answer and outcome slots, for a caller that already holds the request). A file that
        cannot be read is left out of the group and reported as a :class:`Problem`; this never
        raises for what is on disk. Raises :class:`InvalidId` for an ID that is not one.
        """
        return self._read_group(validate_id(request_id), names, kinds)

    def _read_group(
        self,
        request_id: str,
        names: Collection[str] | None = None,
        kinds: Collection[Kind] | None = None,
    ) -> tuple[Group, tuple[Problem, ...]]:
        """:meth:`read_group` for an ID already validated (names are built without checking
        it again: a listing of 10,000 requests would check each ID some 20 times)."""
        every_kind = kinds is None
        if names is not None and len(names) == 1:
            # One file to read (a scan's request alone; a watcher's on that file's event):
            # read it, without the group's machinery.
            (name,) = names
            suffix = name[len(request_id) :]
            kind = KIND_BY_SUFFIX.get(suffix)
            if kind is not None and (kinds is None or kind in kinds):
                return self._lone_request(request_id, name)
            if kinds is not None and not kinds and suffix in SLOT_BY_SUFFIX:
                return self._lone_slot(request_id, name, SLOT_BY_SUFFIX[suffix])
        kinds = tuple(KINDS) if kinds is None else kinds
        problems: list[Problem] = []
        found: dict[str, Any] = {}

        def read(name: str, cls: type[R]) -> R | None:
            if names is not None and name not in names:
                return None
            try:
                return self._read_record(name, cls, request_id)
            except Unreadable as exc:
                problems.append(Problem(name=name, reason=str(exc)))
                return None

        # Read in the reverse of publication order (outcome, answer, request), while removal
        # goes in publication order (request, answer, outcome). Then a reader racing either
        # never sees a group go backwards: an outcome seen means ended; no outcome seen and
        # a request seen means the request was not being removed yet.
        found["settled"] = read(request_id + SETTLED_SUFFIX, Settled)
        found["answer"] = read(request_id + ANSWER_SUFFIX, Answer)
        slot_problems = len(problems)
        if names is not None and len(names) == 1 and every_kind:
            kinds = ()  # its one name is an answer or an outcome: no request to read
        requests = [
            request
            for kind in kinds
            if (request := read(request_id + REQUEST_SUFFIX[kind], Request)) is not None
        ]
        if len(requests) + len(problems) - slot_problems > 1:
            for request in requests:
                problems.append(
                    Problem(
                        name=request_id + REQUEST_SUFFIX[request.kind],
                        reason="another request file has the same ID",
                    )
                )
            requests = []
        found["request"] = requests[0] if requests else None
        return Group(id=request_id, **found), tuple(problems)

    def _lone_slot(
        self, request_id: str, name: str, slot: Slot
    ) -> tuple[Group, tuple[Problem, ...]]:
        """:meth:`_read_group` of one answer or outcome file alone (what a watcher reads
        when that file appears for a request it holds)."""
        try:
            if slot is Slot.ANSWER:
                return Group(id=request_id, answer=self._read_record(name, Answer, request_id)), ()
            return Group(id=request_id, settled=self._read_record(name, Settled, request_id)), ()
        except Unreadable as exc:
            return Group(id=request_id), (Problem(name=name, reason=str(exc)),)

    def _lone_request(self, request_id: str, name: str) -> tuple[Group, tuple[Problem, ...]]:
        """:meth:`_read_group` of a scan's common case, a request file alone: its one name
        says which file to read, and there are no slots to try (10,000 waiting requests are
        10,000 of these in every listing)."""
        try:
            request = self._read_record(name, Request, request_id)
        except Unreadable as exc:
            return Group(id=request_id), (Problem(name=name, reason=str(exc)),)
        # Built from its fields in order: 10,000 of these in a scan (see from_fields).
        return from_fields(Group, (request_id, request, None, None)), ()

    def derive(
        self,
        group: Group,
        alive_cache: dict[str, bool] | None = None,
        *,
        now: datetime | None = None,
    ) -> Status | None:
        """*group*'s state now (None if it has no request), probing its server's lock only if
        the state depends on it. *alive_cache* (server ID to liveness; see :meth:`alive_key`)
        spares repeated probes across one pass over many groups: it is read and filled in.
        *now*: the clock's time, if the caller has just read it (one pass over many groups
        derives them all at one instant)."""
        alive: bool | None = None
        if needs_liveness(group):
            assert group.request is not None
            key = self.alive_key(group.request)
            if alive_cache is not None and key in alive_cache:
                alive = alive_cache[key]
            else:
                alive = self.request_alive(group.request)
                if alive_cache is not None:
                    alive_cache[key] = alive
        return derive_status(
            group, now=self.clock.now() if now is None else now, server_alive=alive
        )

    def read(self, request_id: str) -> Group:
        """The files of one ID as they are now (unreadable ones left out)."""
        return self.read_group(validate_id(request_id))[0]

    def outcome(self, request_id: str) -> Settled | None:
        """The outcome record of one ID, None while none is written (or one that cannot be
        read is there): its outcome slot alone, for a process that holds the request and
        waits for it to be settled. Raises :class:`InvalidId` for an ID that is not one."""
        request_id = validate_id(request_id)
        group, _ = self._read_group(request_id, names=(settled_name(request_id),), kinds=())
        return group.settled

    def status(self, request_id: str) -> Status:
        """The derived state of one request; raises UnknownRequest or UnreadableRequest."""
        group, problems = self.read_group(validate_id(request_id))
        status = self.derive(group)
        if status is None:
            if problems:
                raise UnreadableRequest(request_id, problems[0].reason)
            raise UnknownRequest(request_id)
        return status

    def scan(self, only: Callable[[str], bool] | None = None) -> Scanned:
        """Every ID's group as it is now, and every entry that could not be read (a name that
        does not parse, a file refused): one listing of the directory, one read per file.
        *only*, if given, picks the IDs to read (the rest are not read, nor reported)."""
        # An ID's one name, or its names: most IDs have one (a request waiting), kept as it is
        # rather than in a set of its own (10,000 sets a listing of 10,000).
        names_by_id: dict[str, str | set[str]] = {}
        problems: list[Problem] = []
        for name in sorted(list_dir(self.dir_fd)):
            verdict, request_id = name_id(name)
            if verdict is NameVerdict.IGNORED:
                continue
            if verdict is NameVerdict.BAD or request_id is None:
                reason = entry_problem(self.dir_fd, name) or "its name is not ID.KIND.json"
                problems.append(Problem(name=name, reason=reason))
                continue
            if only is None or only(request_id):
                found = names_by_id.get(request_id)
                if found is None:
                    names_by_id[request_id] = name
                elif isinstance(found, str):
                    names_by_id[request_id] = {found, name}
                else:
                    found.add(name)
        with self._cache_lock:
            self._cache_limit = max(self._cache_limit, REQUEST_CACHE_SIZE + len(names_by_id))
        groups: list[Group] = []
        for request_id, names in names_by_id.items():
            # Each ID was validated when its name was parsed.
            if isinstance(names, str):
                if KIND_BY_SUFFIX.get(names[len(request_id) :]) is not None:
                    group, group_problems = self._lone_request(request_id, names)
                else:
                    group, group_problems = self._read_group(request_id, (names,))
            else:
                group, group_problems = self._read_group(request_id, names)
            if group_problems:
                problems.extend(group_problems)
            groups.append(group)
        return tuple(groups), tuple(problems)

    def listing(
        self,
        *,
        kinds: Collection[Kind] | None = None,
        states: Collection[State] | None = None,
        scanned: Scanned | None = None,
    ) -> Listing:
        """Every readable request with its state, oldest first; skipped entries as problems.

        *scanned*, if given, is a :meth:`scan` just taken, to read from instead of scanning
        again (a listing followed by its sweep reads the channel once)."""
        groups, problems = self.scan() if scanned is None else scanned
        alive_cache: dict[str, bool] = {}
        now = self.clock.now()  # every group derived at one instant, as a sweep plans them
        statuses = []
        for group in groups:
            if kinds is not None and (group.request is None or group.request.kind not in kinds):
                continue
            status = self.derive(group, alive_cache, now=now)
            if status is None or (states is not None and status.state not in states):
                continue
            statuses.append(status)
        # Oldest first, the ID between requests filed in the same instant: sorted by ID, then
        # (stably) by filing time, which compares one datetime rather than a tuple whose
        # items are compared twice each (half the sort's time at 10,000). A scan's groups
        # come in ID order already: the first sort then only confirms it.
        statuses.sort(key=_BY_ID)
        statuses.sort(key=_BY_FILING)
        return Listing(statuses=tuple(statuses), problems=tuple(problems))

    def listing_and_sweep(
        self,
        *,
        kinds: Collection[Kind] | None = None,
        states: Collection[State] | None = None,
    ) -> tuple[Listing, SweepReport]:
        """:meth:`listing`, then :meth:`sweep`, from one scan of the directory. The listing
        shows the channel as it was before the sweep (a request gone stale is shown once, as
        stale); the sweep plans from the same groups (its every step is first-wins)."""
        scanned = self.scan()
        return self.listing(kinds=kinds, states=states, scanned=scanned), self.sweep(
            scanned=scanned
        )

    # --- transitions ---------------------------------------------------------------------

    def file(self, request: Request) -> None:
        """Publish a request. Its ID must be new."""
        name = request_name(request.id, request.kind)
        self.filed_ids.add(request.id)  # before it can be seen: its first event is followed
        # Another kind's request under this ID; one of the same kind makes the link fail.
        taken = any(
            self._exists(request.id + suffix)
            for kind, suffix in REQUEST_SUFFIX.items()
            if kind is not request.kind
        )
        data = _within_cap(dumps_record(to_json(request)), f"{request.kind.value} request")
        if taken or not publish(
            self.dir_fd,
            self.tmp_fd,
            name,
            data,
            shown=str(self.path),
            on_published=self._published_as(name, request),
        ):
            raise IdCollision(request.id)

    def _exists(self, name: str) -> bool:
        try:
            os.stat(name, dir_fd=self.dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return False
        return True

    def _read_winner(self, name: str, cls: type[R], request_id: str) -> R:
        try:
            record = self._read_record(name, cls, request_id)
        except Unreadable as exc:
            raise UnreadableRequest(request_id, f"{name}: {exc}") from None
        if record is None:  # only if something removed it in the instant since it won
            raise UnknownRequest(request_id)
        return record

    def _new_answer(
        self,
        request: Request,
        decision: str,
        *,
        via: str,
        text: str | None = None,
        reason: str | None = None,
        width: Mapping[str, Any] | None = None,
    ) -> Answer:
        """An answer from this process, bound to the request's binding as it is now."""
        return Answer(
            id=request.id,
            kind=request.kind,
            decision=decision,
            text=text,
            reason=reason,
            width=width,
            # The digest of the binding as it is on disk (for a legacy request, as read): the
            # one an earlier build's asker will compare with.
            binding_digest=request.binding_digest,
            answered_at=record_time(self.clock),
            via=via,
            pid=os.getpid(),
            user=self.user,
        )

    def _publish_answer(self, answer: Answer, request: Request | None = None) -> AnswerResult:
        name = answer_name(answer.id)
        data = _within_cap(dumps_record(to_json(answer)), "answer")
        if publish(
            self.dir_fd,
            self.tmp_fd,
            name,
            data,
            shown=str(self.path),
            on_published=self._published_as(name, answer),
        ):
            return AnswerResult(won=True, answer=answer, request=request)
        winner = self._read_winner(name, Answer, answer.id)
        return AnswerResult(won=False, answer=winner, request=request)

    def answer(
        self,
        request_id: str,
        decision: str,
        *,
        kind: Kind,
        via: str,
        text: str | None = None,
        reason: str | None = None,
        shown: Request | None = None,
        width: Mapping[str, Any] | None = None,
    ) -> AnswerResult:
        """A person's answer: checked, then published first-wins.

        *kind* is the kind the person meant to answer (a fact answered as a command approval is
        refused). *shown* is the request as the person saw it, if a face kept it: an answer is
        refused if the request changed since. *width*: how wide an approval reaches (an
        answer's `width`, pending._offers; None: the exact call), one the request offers.
        Returns who won (and the request as checked); a refusal raises.
        """
        group, problems = self.read_group(validate_id(request_id))
        request = group.request
        if request is None:
            if problems:
                raise UnreadableRequest(request_id, problems[0].reason)
            raise UnknownRequest(request_id)
        if problems:  # junk in its answer or outcome slot: the slot can take no answer
            raise UnreadableRequest(request_id, f"{problems[0].name}: {problems[0].reason}")
        if request.kind is not kind:
            raise WrongKind(request_id, request.kind, kind, DECISIONS[request.kind])
        problem = decision_problem(request, decision, text, width)
        if problem is not None:
            raise InvalidDecision(request_id, *problem)
        if shown is not None and (
            shown.binding_digest != request.binding_digest or shown.binding != request.binding
        ):
            raise RequestChanged(request_id)
        status = self.derive(group)
        assert status is not None
        if status.state is State.SETTLED:
            settled = status.settled or ending_of(status.answer)  # type: ignore[arg-type]
            raise AlreadySettled(settled, status.answer)
        if status.state is State.ANSWERED and status.answer is not None:
            raise AlreadyAnswered(status.answer)
        # Past its expiry by this clock, but its asker holds its lock: it is waiting, and keeps
        # its own deadline on its monotonic clock (a clock ahead of the asker's must not turn
        # the person away; the first to take the slot, answer or `timed-out`, decides). Only
        # a legacy request, judged alive by its pid, is still held to the wall clock.
        asker_waits = status.server_alive is True and not request.legacy
        if status.state is State.STALE and not asker_waits:
            raise StaleRequest(request_id, status.reason or "it can no longer be answered")
        return self._publish_answer(
            self._new_answer(request, decision, via=via, text=text, reason=reason, width=width),
            request,
        )

    def claim(
        self, request: Request, ending: Outcome, *, via: str, reason: str | None = None
    ) -> AnswerResult:
        """Claim the answer slot with a tombstone (`timed-out`, `withdrawn` or `stale`).

        Used by the asker (a deadline, a withdrawal) and by sweepers. If a person's answer got
        the slot first, it stands: the result says who won.
        """
        decision = ending.value
        if decision not in TOMBSTONES:
            raise ValueError(f"{decision!r} is not an ending that claims the slot")
        return self._publish_answer(
            self._new_answer(request, decision, via=via, reason=reason), request
        )

    def settle(
        self,
        request: Request,
        outcome: Outcome,
        *,
        by: str,
        decision: str | None = None,
        result: str | None = None,
        reason: str | None = None,
        delivery: Delivery | None = None,
    ) -> SettleResult:
        """Record what applying the decision did, first-wins."""
        settled = Settled(
            id=request.id,
            kind=request.kind,
            outcome=outcome,
            decision=decision,
            result=result,
            reason=reason,
            delivery=delivery,
            settled_at=record_time(self.clock),
            by=by,
        )
        name = settled_name(request.id)
        if publish(
            self.dir_fd,
            self.tmp_fd,
            name,
            dumps_record(to_json(settled)),
            shown=str(self.path),
            on_published=self._published_as(name, settled),
        ):
            return SettleResult(won=True, settled=settled)
        return SettleResult(won=False, settled=self._read_winner(name, Settled, request.id))

    def settle_with(
        self, request: Request, settlement: Settlement, *, by: str, result: str | None = None
    ) -> SettleResult:
        """:meth:`settle` with what :func:`pending.settlement_for` (or a sweep plan) decided,
        plus the *result* applying it made, if any."""
        return self.settle(
            request,
            settlement.outcome,
            by=by,
            decision=settlement.decision,
            result=result,
            reason=settlement.reason,
            delivery=settlement.delivery,
        )

    # --- sweeping ------------------------------------------------------------------------

    def sweep(
        self,
        *,
        settled_grace_s: float = SETTLED_GRACE_S,
        stale_tmp_after_s: float = STALE_TMP_AFTER_S,
        scanned: Scanned | None = None,
    ) -> SweepReport:
        """Tidy the channel; cheap enough to run on every listing and start.

        Stale waiting requests are claimed `stale` and settled; a slot a crashed process
        claimed is settled; ended groups past *settled_grace_s* are removed; temp files and
        lock files crashed processes left are removed. A fact request that no outcome ended is
        never removed; an answered one whose server is gone is returned in ``awaiting`` for
        the answering face to apply. A group with a file that cannot be read is left alone
        and reported in ``problems``, as is one that changed into such a file mid-sweep.

        What to do is decided by :func:`pending.plan_sweep` (pure); this method reads the
        groups, probes liveness for the plan, and carries the plan out. *scanned*, if given,
        is a :meth:`scan` just taken (the one a listing showed), planned from instead of
        scanning again: every step is first-wins, so a group that moved on since is safe.
        """
        now = self.clock.now()
        groups, problems = self.scan() if scanned is None else scanned
        alive_cache: dict[str, Liveness] = {}

        def alive(request: Request) -> bool | None:
            key = self.alive_key(request)
            if key not in alive_cache:
                alive_cache[key] = self.liveness(request)
            found = alive_cache[key]
            return None if found is Liveness.UNKNOWN else found is Liveness.ALIVE

        unreadable = set()
        for problem in problems:
            _, parsed = parse_name(problem.name)
            if parsed is not None:
                unreadable.add(parsed.id)
        plan = plan_sweep(
            groups, now=now, alive=alive, settled_grace_s=settled_grace_s, unreadable=unreadable
        )
        done: dict[SweepStep, list[str]] = {step: [] for step in SweepStep}
        endings: list[SweptEnding] = []
        awaiting: list[Status] = []
        skipped = list(problems)
        errors: list[str] = []
        left = 0
        for action in plan:
            if action.step is SweepStep.AWAIT:
                if action.status is not None:
                    awaiting.append(action.status)
                continue
            if errors:  # the directory cannot be written: leave the rest for a later sweep
                left += 1
                continue
            try:
                if self._execute(action, endings):
                    done[action.step].append(action.id)
            except ChannelUnwritable as exc:
                errors.append(str(exc))
            except PendingError as exc:  # a file changed under us into one we cannot read
                skipped.append(Problem(name=action.id, reason=str(exc)))
        if left:
            errors.append(f"{left} more sweep step(s) were left for a later sweep.")
        return SweepReport(
            stale=tuple(done[SweepStep.CLAIM_STALE]),
            finished=tuple(done[SweepStep.SETTLE]),
            removed=tuple(done[SweepStep.REMOVE]),
            temp_files=self._sweep_dir(
                self.tmp_fd, now.timestamp() - stale_tmp_after_s, str(self.path / TMP_DIR)
            ),
            locks=self._sweep_locks(),
            awaiting=tuple(awaiting),
            problems=tuple(skipped),
            errors=tuple(errors),
            endings=tuple(endings),
        )

    def _execute(self, action: SweepAction, endings: list[SweptEnding]) -> bool:
        """Carry out one planned step; True if it did what was planned. An outcome it wrote
        (won) is added to *endings*."""
        request = action.request
        if action.step is SweepStep.REMOVE:
            self._remove_group(action.id)
            return True
        if request is None:
            return False
        if action.step is SweepStep.SETTLE:
            assert action.settlement is not None
            settlement = action.settlement
        else:
            claimed = self.claim(request, Outcome.STALE, via=VIA_SWEEP, reason=action.reason)
            if not claimed.answer.is_tombstone:
                return False  # a person's answer got the slot first: it stands
            # Settle what holds the slot: ours, or another ending that got there first.
            settlement = settlement_for(request, claimed.answer)
        result = self.settle_with(request, settlement, by=VIA_SWEEP)
        if result.won:
            endings.append(SweptEnding(request=request, settled=result.settled))
        return True

    def _remove_group(self, request_id: str) -> None:
        # The outcome goes last, so a group half removed by a crash still reads as ended.
        shown = str(self.path)
        for kind in KINDS:
            remove(self.dir_fd, request_name(request_id, kind), shown=shown)
        remove(self.dir_fd, answer_name(request_id), shown=shown)
        remove(self.dir_fd, settled_name(request_id), shown=shown)

    def _sweep_locks(self) -> int:
        """Remove the lock files of servers that died; anything else there is left alone."""
        count = 0
        for name in list_dir(self.servers_fd):
            try:
                st = os.stat(name, dir_fd=self.servers_fd, follow_symlinks=False)
                # Only a plain file can be a lock an asker made; a directory or a FIFO there
                # is someone else's, and not the sweep's to remove.
                if stat.S_ISREG(st.st_mode):
                    count += remove_if_free(self.servers_fd, name)
            except OSError:  # gone meanwhile, or refused: leave it
                continue
        return count

    @staticmethod
    def _sweep_dir(dir_fd: int, older_than: float, shown: str) -> int:
        """Remove staged files older than *older_than* whose writer is gone. Age alone is a
        wall-clock judgement (a clock set forward makes a fresh file look old); the writer's
        pid, in the staged name, keeps a living writer's file (a reused pid only delays it)."""
        count = 0
        for name in list_dir(dir_fd):
            try:
                st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except OSError:
                continue
            if st.st_mtime >= older_than or _writer_alive(name):
                continue
            try:
                if remove(dir_fd, name, shown=shown):
                    count += 1
            except ChannelUnwritable:  # a directory someone made, or an unwritable disk
                continue
        return count
