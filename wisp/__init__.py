"""wisp: the application built on the pending channel.

For programs that need a person: :class:`Asker` (one asking server), :class:`ApprovalGate`
(may this command run?), :class:`QuestionAsker`, and :class:`FactKeeper` (keep this fact?);
for a server an agent reaches the person through, :class:`AgentSession` (all of those for the
server's life, with its threads' and session's facts in a :class:`FactBook`). The `wisp`
command is :mod:`wisp.cli`; `wisp mcp` (:mod:`wisp.mcp`) is an AgentSession's MCP face.
"""

from wisp._version import __version__

_TYPE_CHECKING = False  # typing's flag, without importing typing (pending._classes says why)

# Where each public name lives. Loaded on first use (PEP 562), so that `wisp --version` or a
# listing pays for no watcher, no asyncio and no metadata scan it does not use.
_HOMES = {
    "ANSWERABLE": "wisp.kinds._view",
    "ASKED_MAX": "wisp.audit.history",
    "AgentSession": "wisp.agents.session",
    "AnswerFate": "wisp._answering",
    "AnswerReport": "wisp._answering",
    "Answerer": "wisp._answering",
    "Applier": "wisp.kinds._asker",
    "Approval": "wisp.kinds.command_gate",
    "ApprovalGate": "wisp.kinds.command_gate",
    "ApprovalOutcome": "wisp.kinds.command_gate",
    "Asker": "wisp._asking",
    "AuditEvent": "wisp.audit.writer",
    "AuditLogError": "wisp.audit.reader",
    "AuditLogUnsafe": "wisp.audit.writer",
    "CallCheck": "wisp.agents.check",
    "Cancel": "wisp._deadlines",
    "ChannelBack": "wisp._live",
    "ChannelGone": "wisp._live",
    "CheckRefused": "wisp.agents.check",
    "Config": "wisp.stores.config",
    "ConfigError": "wisp.stores.config",
    "ConfigUnusable": "wisp.stores.config",
    "DeadlineError": "wisp._deadlines",
    "Device": "wisp.stores.devices",
    "DeviceStore": "wisp.stores.devices",
    "DECIDERS": "wisp.audit.reader",
    "DecidedCall": "wisp.policy.calls",
    "Decider": "wisp.policy.calls",
    "EVENTS": "wisp.audit.reader",
    "EndedRequest": "wisp.audit.history",
    "Ending": "wisp.kinds._asker",
    "EntryPoint": "wisp._entry",
    "Face": "wisp.routes.notify",
    "Fact": "wisp.stores.facts",
    "FactBook": "wisp.stores.threadfacts",
    "FactKeeper": "wisp.kinds.fact_keeper",
    "FactRefused": "wisp.stores.facts",
    "FactScope": "wisp.stores.factids",
    "FactStore": "wisp.stores.facts",
    "Found": "wisp._live",
    "Grant": "wisp.stores.grants",
    "GrantStore": "wisp.stores.grants",
    "GrantsError": "wisp.stores.grants",
    "HomeGone": "wisp._live",
    "Inbox": "wisp._answering",
    "KeepRequest": "wisp.kinds.fact_keeper",
    "KeepState": "wisp.kinds.fact_keeper",
    "LiveInbox": "wisp._live",
    "LogFilter": "wisp.audit.reader",
    "LogFollower": "wisp.audit.reader",
    "NotFiled": "wisp.agents.session",
    "NotOurs": "wisp.agents.session",
    "NoteFact": "wisp.stores.threadfacts",
    "Notifier": "wisp.routes.notify",
    "PERMANENT_PREFIX": "wisp.stores.factids",
    "PairingRefused": "wisp.stores.devices",
    "PermissionVerdict": "wisp.agents.session",
    "PolicyListing": "wisp.policy.report",
    "PushWhen": "wisp.stores.config",
    "QuestionAsker": "wisp.kinds.question_gate",
    "ROUTES": "wisp.routes.notify",
    "RateLimit": "wisp.routes.notify",
    "Reply": "wisp.kinds.question_gate",
    "ReplyOutcome": "wisp.kinds.question_gate",
    "Route": "wisp.routes.notify",
    "RuleSuggestion": "wisp.policy.report",
    "SESSION_PREFIX": "wisp.stores.factids",
    "SETTINGS": "wisp.stores.config",
    "SAFE_CWD": "wisp.routes.subproc",
    "STORED_SCOPES": "wisp.stores.grants",
    "StartError": "wisp.agents.session",
    "StoreError": "wisp.stores.jsonstore",
    "THREAD_PREFIX": "wisp.stores.factids",
    "UnknownFact": "wisp.stores.threadfacts",
    "Verdict": "wisp.policy.calls",
    "WAITING": "wisp.kinds._view",
    "WispError": "wisp._errors",
    "answerable_now": "wisp._answering",
    "check_call": "wisp.agents.check",
    "check_deadline": "wisp._deadlines",
    "check_json": "wisp.agents.check",
    "child_env": "wisp.routes.subproc",
    "collecting": "wisp.agents.session",
    "contradicted": "wisp.kinds.fact",
    "current_user": "wisp._home",
    "deadline_range": "wisp._deadlines",
    "default_notifier": "wisp.routes.notify",
    "diagnose": "wisp._doctor",
    "exec_approval": "wisp.agents.gate",
    "follow_decided": "wisp.policy.calls",
    "ended_requests": "wisp.audit.history",
    "hello_heard": "wisp.audit.hello",
    "is_legacy": "wisp.audit.reader",
    "known_event": "wisp.audit.reader",
    "load_config": "wisp.stores.config",
    "look_up": "wisp._answering",
    "loosens": "wisp.stores.config",
    "new_fact_id": "wisp.stores.factids",
    "open_channel": "wisp._home",
    "parse_since": "wisp.audit.reader",
    "parse_value": "wisp.stores.config",
    "policy_listing": "wisp.policy.report",
    "policy_listing_json": "wisp.policy.report",
    "project_here": "wisp.policy.report",
    "python_module": "wisp.routes.subproc",
    "read_log": "wisp.audit.reader",
    "send_test": "wisp._doctor",
    "set_setting": "wisp.stores.config",
    "suggest_rules": "wisp.policy.report",
    "suggestion_json": "wisp.policy.report",
    "terminal_notice": "wisp.routes.terminal",
    "terminal_notifies": "wisp.routes.terminal",
    "wait_until": "wisp._answering",
    "wisp_home": "wisp._home",
}

if _TYPE_CHECKING:
    from typing import Any

    from wisp._answering import (
        Answerer,
        AnswerFate,
        AnswerReport,
        Inbox,
        answerable_now,
        look_up,
        wait_until,
    )
    from wisp._asking import Asker
    from wisp._deadlines import Cancel, DeadlineError, check_deadline, deadline_range
    from wisp._doctor import diagnose, send_test
    from wisp._entry import EntryPoint
    from wisp._errors import WispError
    from wisp._home import current_user, open_channel, wisp_home
    from wisp._live import ChannelBack, ChannelGone, Found, HomeGone, LiveInbox
    from wisp.agents.check import CallCheck, CheckRefused, check_call, check_json
    from wisp.agents.gate import exec_approval
    from wisp.agents.session import (
        AgentSession,
        NotFiled,
        NotOurs,
        PermissionVerdict,
        StartError,
        collecting,
    )
    from wisp.audit.hello import hello_heard
    from wisp.audit.history import ASKED_MAX, EndedRequest, ended_requests
    from wisp.audit.reader import (
        DECIDERS,
        EVENTS,
        AuditLogError,
        LogFilter,
        LogFollower,
        is_legacy,
        known_event,
        parse_since,
        read_log,
    )
    from wisp.audit.writer import AuditEvent, AuditLogUnsafe
    from wisp.kinds._asker import Applier, Ending
    from wisp.kinds._view import ANSWERABLE, WAITING
    from wisp.kinds.command_gate import Approval, ApprovalGate, ApprovalOutcome
    from wisp.kinds.fact import contradicted
    from wisp.kinds.fact_keeper import FactKeeper, KeepRequest, KeepState
    from wisp.kinds.question_gate import QuestionAsker, Reply, ReplyOutcome
    from wisp.policy.calls import DecidedCall, Decider, Verdict, follow_decided
    from wisp.policy.report import (
        PolicyListing,
        RuleSuggestion,
        policy_listing,
        policy_listing_json,
        project_here,
        suggest_rules,
        suggestion_json,
    )
    from wisp.routes.notify import (
        ROUTES,
        Face,
        Notifier,
        RateLimit,
        Route,
        default_notifier,
    )
    from wisp.routes.subproc import SAFE_CWD, child_env, python_module
    from wisp.routes.terminal import terminal_notice, terminal_notifies
    from wisp.stores.config import (
        SETTINGS,
        Config,
        ConfigError,
        ConfigUnusable,
        PushWhen,
        load_config,
        loosens,
        parse_value,
        set_setting,
    )
    from wisp.stores.devices import Device, DeviceStore, PairingRefused
    from wisp.stores.factids import (
        PERMANENT_PREFIX,
        SESSION_PREFIX,
        THREAD_PREFIX,
        FactScope,
        new_fact_id,
    )
    from wisp.stores.facts import Fact, FactRefused, FactStore
    from wisp.stores.grants import STORED_SCOPES, Grant, GrantsError, GrantStore
    from wisp.stores.jsonstore import StoreError
    from wisp.stores.threadfacts import FactBook, NoteFact, UnknownFact


def __getattr__(name: str) -> "Any":
    if name in _HOMES:
        # As an import statement loads it (`__import__`, which audit hooks hear, unlike
        # importlib's): a face's `from wisp import X` loads X's module just as its own
        # `from wisp.home import X` did (tests/test_startup.py interrupts there).
        home = __import__(_HOMES[name], fromlist=(name,))
        value: Any = getattr(home, name)
    else:
        raise AttributeError(f"module 'wisp' has no attribute {name!r}")
    globals()[name] = value  # once loaded, an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "ANSWERABLE",
    "ASKED_MAX",
    "DECIDERS",
    "EVENTS",
    "PERMANENT_PREFIX",
    "ROUTES",
    "SAFE_CWD",
    "SESSION_PREFIX",
    "SETTINGS",
    "STORED_SCOPES",
    "THREAD_PREFIX",
    "WAITING",
    "AgentSession",
    "AnswerFate",
    "AnswerReport",
    "Answerer",
    "Applier",
    "Approval",
    "ApprovalGate",
    "ApprovalOutcome",
    "Asker",
    "AuditEvent",
    "AuditLogError",
    "AuditLogUnsafe",
    "CallCheck",
    "Cancel",
    "ChannelBack",
    "ChannelGone",
    "CheckRefused",
    "Config",
    "ConfigError",
    "ConfigUnusable",
    "DeadlineError",
    "DecidedCall",
    "Decider",
    "Device",
    "DeviceStore",
    "EndedRequest",
    "Ending",
    "EntryPoint",
    "Face",
    "Fact",
    "FactBook",
    "FactKeeper",
    "FactRefused",
    "FactScope",
    "FactStore",
    "Found",
    "Grant",
    "GrantStore",
    "GrantsError",
    "HomeGone",
    "Inbox",
    "KeepRequest",
    "KeepState",
    "LiveInbox",
    "LogFilter",
    "LogFollower",
    "NotFiled",
    "NotOurs",
    "NoteFact",
    "Notifier",
    "PairingRefused",
    "PermissionVerdict",
    "PolicyListing",
    "PushWhen",
    "QuestionAsker",
    "RateLimit",
    "Reply",
    "ReplyOutcome",
    "Route",
    "RuleSuggestion",
    "StartError",
    "StoreError",
    "UnknownFact",
    "Verdict",
    "WispError",
    "__version__",
    "answerable_now",
    "check_call",
    "check_deadline",
    "check_json",
    "child_env",
    "collecting",
    "contradicted",
    "current_user",
    "deadline_range",
    "default_notifier",
    "diagnose",
    "ended_requests",
    "exec_approval",
    "follow_decided",
    "hello_heard",
    "is_legacy",
    "known_event",
    "load_config",
    "look_up",
    "loosens",
    "new_fact_id",
    "open_channel",
    "parse_since",
    "parse_value",
    "policy_listing",
    "policy_listing_json",
    "project_here",
    "python_module",
    "read_log",
    "send_test",
    "set_setting",
    "suggest_rules",
    "suggestion_json",
    "terminal_notice",
    "terminal_notifies",
    "wait_until",
    "wisp_home",
]
