"""What the tools take: each argument's type, its limits (declared, so clients see them in
`tools/list` as `maxLength`, `maxItems`, `minimum`, `maximum`), and wisp's words for an
argument that does not fit.

The SDK validates a call's arguments against these types before a tool runs;
:func:`refused_arguments` turns its validation error into wisp's words, so its own text never
reaches the caller. What a schema cannot say (not blank, no NUL, an absolute path, a valid
request id) each tool checks with the helpers here, refusing with :class:`BadArgument`.

No `from __future__ import annotations` here: the SDK reads these types at registration.
"""

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import Field
from pydantic_core import ErrorDetails

from wisp import WispError

# A request is at most MAX_RECORD_BYTES (64 KiB) on disk, text shown twice (binding and body),
# JSON-escaped at up to 6 bytes a character: these keep every request well inside it.
COMMAND_MAX_CHARS = 4096
CWD_MAX_CHARS = 1024
REASON_MAX_CHARS = 1024
QUESTION_MAX_CHARS = 2048
OPTION_MAX_CHARS = 200
OPTIONS_MAX = 20
FACT_WORD_MAX_CHARS = 200  # a fact's subject and name
FACT_VALUE_MAX_CHARS = 2000
FACT_ID_MAX_CHARS = 64
NOTIFY_INPUT_MAX_CHARS = 4096  # notify cuts to 64/256 itself; beyond this it is not a message
TOOL_NAME_MAX_CHARS = 256  # a tool's name (an MCP tool's is mcp__<server>__<tool>)
TOOL_USE_ID_MAX_CHARS = 256

WAIT_DEFAULT_S = 45.0  # under common clients' tool-call timeouts (60 s is usual)
WAIT_MAX_S = 3600.0  # one call's wait; the request keeps its own bound (approval.timeoutSeconds)

SHOWN_MAX_CHARS = 40  # of a refused value, quoted back to the caller

Command = Annotated[
    str,
    Field(description="The command, exactly as it will run.", max_length=COMMAND_MAX_CHARS),
]
Cwd = Annotated[
    str | None,
    Field(
        description="Absolute directory it runs in (default: the server's).",
        max_length=CWD_MAX_CHARS,
    ),
]
Reason = Annotated[str | None, Field(description="Why it should run.", max_length=REASON_MAX_CHARS)]
WaitSeconds = Annotated[
    float,
    Field(
        description="How long this call waits for the answer, in seconds.",
        strict=True,  # a JSON number: never true/false, never a string that looks like one
        ge=0,
        le=WAIT_MAX_S,
        allow_inf_nan=False,
    ),
]
Question = Annotated[
    str,
    Field(description="The question, for a person to read.", max_length=QUESTION_MAX_CHARS),
]
Options = Annotated[
    list[Annotated[str, Field(max_length=OPTION_MAX_CHARS)]] | None,
    Field(description="The answers to choose from.", max_length=OPTIONS_MAX),
]
FreeText = Annotated[
    bool | None,
    Field(
        description="Whether any text is an answer (default: only without options).",
        strict=True,  # true or false: never "yes", 1 or "off"
    ),
]
RequestId = Annotated[str, Field(description="The request's id, as a result gave it.")]
Subject = Annotated[
    str,
    Field(description="What the fact is about, e.g. 'release'.", max_length=FACT_WORD_MAX_CHARS),
]
Name = Annotated[
    str, Field(description="Which property, e.g. 'codename'.", max_length=FACT_WORD_MAX_CHARS)
]
Value = Annotated[
    str, Field(description="Its value, e.g. 'BLUE HERON'.", max_length=FACT_VALUE_MAX_CHARS)
]
FactId = Annotated[
    str,
    Field(description="The fact's id: c…, s… (or p…, refused).", max_length=FACT_ID_MAX_CHARS),
]
Scope = Annotated[Literal["thread", "session", "permanent"], Field(description="Where it goes.")]
Title = Annotated[str, Field(description="A few words.", max_length=NOTIFY_INPUT_MAX_CHARS)]
Message = Annotated[
    str, Field(description="One or two sentences.", max_length=NOTIFY_INPUT_MAX_CHARS)
]

ToolName = Annotated[
    str,
    Field(
        description="The tool the agent is about to call, e.g. 'Bash', 'Edit'.",
        max_length=TOOL_NAME_MAX_CHARS,
    ),
]
# Its size is bounded by what one request holds (the application denies a larger call).
ToolInput = Annotated[
    dict[str, Any], Field(description="The tool's arguments, exactly as it will get them.")
]
ToolUseId = Annotated[
    str | None,
    Field(
        description="The tool call's id, as the agent gave it.", max_length=TOOL_USE_ID_MAX_CHARS
    ),
]

# What to do about a number beyond its maximum, where there is more to say than "send less".
_OVER_MAXIMUM = {
    "wait_seconds": "One call waits at most that long: wait less, and call await_request "
    "again if you need to.",
}


class BadArgument(WispError, ValueError):
    """An argument the tool cannot take; the message says which and what would do."""


def required(name: str, value: str) -> str:
    """*value*, which must hold some text."""
    if not value.strip():
        raise BadArgument(f"{name} is empty: it needs some text.")
    return value


def no_nul(name: str, value: str) -> str:
    """*value*, which must hold no NUL: no command line or path can."""
    if "\x00" in value:
        raise BadArgument(
            f"{name} holds a NUL character, which no command line or path can: send it as it "
            "will really run."
        )
    return value


SURROGATES = range(0xD800, 0xE000)  # UTF-16 halves: no text holds one alone


def _has_surrogate(text: str) -> bool:
    return any(ord(c) in SURROGATES for c in text)


def _escaped_surrogates(text: str) -> str:
    return "".join(f"\\u{ord(c):04x}" if ord(c) in SURROGATES else c for c in text)


def surrogate_at(value: Any) -> tuple[int | str, ...] | None:
    """Where a lone UTF-16 surrogate is in *value* (a string, or one in lists and objects, a
    key included): the path to it, or None. JSON allows one (a `\\ud800` escape with no pair),
    but it is not text: nothing can write it, a reply included."""
    # Iterative: a hostile message may nest as deep as the JSON parser allowed.
    stack: list[tuple[tuple[int | str, ...], Any]] = [((), value)]
    while stack:
        loc, item = stack.pop()
        if isinstance(item, str):
            if _has_surrogate(item):
                return loc
        elif isinstance(item, dict):
            for key, inner in reversed(item.items()):
                if _has_surrogate(key):
                    return (*loc, key)
                stack.append(((*loc, key), inner))
        elif isinstance(item, list):
            stack.extend(((*loc, n), inner) for n, inner in reversed(list(enumerate(item))))
    return None


def surrogate_refused(loc: Sequence[int | str]) -> str:
    """What is wrong with an argument holding a lone surrogate, in wisp's words (a key holding
    it named with the surrogate as its escape, so the words can be written)."""
    named = [part if isinstance(part, int) else _escaped_surrogates(part) for part in loc]
    return (
        f"{_argument(named)} holds a lone UTF-16 surrogate (a \\ud800-style escape with no pair), "
        "which is not text: send the characters themselves, as UTF-8 or as a pair of escapes."
    )


def _shown(value: Any) -> str:
    said = repr(value)
    return said if len(said) <= SHOWN_MAX_CHARS else said[: SHOWN_MAX_CHARS - 1] + "…"


def _number(value: Any) -> str:
    """A number as sent: short where that is exact (1e+09), else every digit (3600.0001,
    never a rounded 3600 beside a maximum of 3600)."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return _shown(value)
    short = f"{number:g}"
    return short if float(short) == number else repr(number)


def _argument(loc: Sequence[int | str]) -> str:
    """An argument as the caller named it: `options`, or one of a list's, `options[3]`."""
    if not loc:
        return "the arguments"
    name = str(loc[0])
    return name + "".join(f"[{part}]" for part in loc[1:])


def refused_arguments(errors: Sequence[ErrorDetails]) -> str:
    """The SDK's validation of a call's arguments, in wisp's words: what is wrong with the
    first argument that does not fit, and what would do."""
    error = errors[0]
    name = _argument(error["loc"])
    value = error.get("input")
    limits: dict[str, Any] = dict(error.get("ctx") or {})
    match error["type"]:
        case "missing":
            return f"{name} is missing: this tool needs it."
        case "string_too_long":
            return (
                f"{name} is {len(value)} characters long; at most {limits['max_length']} are "
                "taken. Shorten it."
            )
        case "too_long":
            return (
                f"{limits.get('actual_length', len(value))} {name}; at most "
                f"{limits['max_length']} are taken. Send fewer."
            )
        case "finite_number":
            return f"{name} must be a finite number (got {_shown(value)})."
        case "greater_than_equal":
            least = f"{limits['ge']:g}"
            return f"{name} must be a finite number, {least} or more (got {_shown(value)})."
        case "less_than_equal":
            advice = _OVER_MAXIMUM.get(name, "Send less.")
            return f"{name} is {_number(value)}; at most {limits['le']:g} is taken. {advice}"
        case "float_parsing" | "float_type" | "int_parsing" | "int_type":
            return (
                f"{name} must be a number (got {_shown(value)}): send it as a JSON number, "
                "not true/false or text."
            )
        case "string_type":
            return f"{name} must be a string (got {_shown(value)})."
        case "bool_parsing" | "bool_type":
            return (
                f"{name} must be true or false (got {_shown(value)}): send a JSON boolean, "
                "not a number or text."
            )
        case "list_type":
            return f"{name} must be a list of strings (got {_shown(value)})."
        case "literal_error":
            return f"{name} must be one of {limits['expected']} (got {_shown(value)})."
    return (
        f"{name} is not what this tool takes (got {_shown(value)}); its inputSchema in "
        "tools/list says what it takes."
    )
