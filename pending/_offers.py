"""The answers a command or tool request offers, and whether an answer is one of them (pure:
no I/O).

A request records what it offers in its binding's `offers` (so the binding digest an answer
carries covers what the person was offered); a request without one (an earlier build's, or
an asker that gives none) offers what every approval always took: `once`, `session`,
`project` or `always` for the exact call, or `no`. docs/channel.md, "Widths", shows the JSON:

    "offers": {
      "mustAsk": [],                      # why it is asked every time; () if it is not
      "widths": [
        {"name": "exact", "scopes": ["once", "session", "project", "always"]},
        {"name": "command", "prefix": ["npm", "test"], "scopes": ["session", "project", "always"]},
        {"name": "file", "path": "/p/src/a.py", "scopes": ["session", "project", "always"]},
        {"name": "project", "path": "/p", "scopes": ["session", "project", "always"]}
      ]
    }

An answer that approves wider than the exact call names its width (the answer's `width`: the
offer's `name` and `prefix` or `path`, without its scopes); `no` always stands. A must-ask
request offers `once` for the exact call and nothing wider, and that is checked here, where
the channel checks every answer: an offer list that says more for a must-ask call is refused
as the record it is in.
"""

# Named tuples, their annotations not postponed: see pending._bindings.

from collections.abc import Mapping
from typing import Any, NamedTuple

from pending._names import Decision, Scope, Width

# The scopes a width wider than the exact call is offered with: `once` is the call itself.
WIDE_SCOPES = (Scope.SESSION, Scope.PROJECT, Scope.ALWAYS)
# A prefix is a command's first words; more than this is no prefix a person grants.
PREFIX_MAX_WORDS = 8
OFFERS_MAX_WIDTHS = 64  # an asker offers a handful; a record offering more is refused
MUST_ASK_MAX_REASONS = 32

_OFFERS_KEYS = frozenset({"mustAsk", "widths"})
_OFFER_KEYS = frozenset({"name", "scopes", "prefix", "path"})
_WIDTH_KEYS = frozenset({"name", "prefix", "path"})
_SCOPE_BY_VALUE = {scope.value: scope for scope in Scope}
_WIDTH_BY_VALUE = {width.value: width for width in Width}


class Offer(NamedTuple):
    """One width a request offers, with the scopes it is offered for."""

    width: Width
    scopes: tuple[Scope, ...]
    prefix: tuple[str, ...] | None = None  # for `command`: the command's first words
    path: str | None = None  # for `file`: the file; for `project`: the project's directory

    @property
    def target(self) -> tuple[Width, tuple[str, ...] | None, str | None]:
        """What the offer grants, without its scopes: what an answer's width names."""
        return (self.width, self.prefix, self.path)


class Offers(NamedTuple):
    """What a request offers: why it is asked every time (must-ask), and its widths."""

    must_ask: tuple[str, ...]
    widths: tuple[Offer, ...]

    def find(self, width: "AnswerWidth") -> Offer | None:
        """The offer of *width*'s target, or None."""
        return next((o for o in self.widths if o.target == width), None)


# What an answer's `width` names: (width, prefix, path), as an offer's target.
AnswerWidth = tuple[Width, tuple[str, ...] | None, str | None]
EXACT: AnswerWidth = (Width.EXACT, None, None)

# What a request with no `offers` offers: what approvals always took.
EVERY_SCOPE = tuple(Scope)
UNSAID_OFFERS = Offers(must_ask=(), widths=(Offer(width=Width.EXACT, scopes=EVERY_SCOPE),))


def must_ask_offers(why: tuple[str, ...]) -> Offers:
    """What a must-ask call offers: `once` for the exact call (and `no`), saying *why*."""
    return Offers(must_ask=why, widths=(Offer(width=Width.EXACT, scopes=(Scope.ONCE,)),))


# --- reading, strictly ------------------------------------------------------------------


def _words(value: Any, what: str) -> tuple[str, ...]:
    if type(value) is not list or not 1 <= len(value) <= PREFIX_MAX_WORDS:
        raise ValueError(f"{what} is a list of 1 to {PREFIX_MAX_WORDS} words")
    if not all(type(word) is str and word for word in value):
        raise ValueError(f"{what}'s words are non-empty strings")
    return tuple(value)


def _path(value: Any, what: str) -> str:
    if type(value) is not str or not value.startswith("/") or "\0" in value:
        raise ValueError(f"{what} is an absolute path")
    return value


def _target(data: Mapping[str, Any], what: str) -> AnswerWidth:
    """The (width, prefix, path) an offer or an answer's width names, checked."""
    name = data.get("name")
    width = _WIDTH_BY_VALUE.get(name) if type(name) is str else None
    if width is None:
        raise ValueError(f"{what}'s name is one of: {', '.join(Width)}")
    prefix, path = data.get("prefix"), data.get("path")
    if width is Width.COMMAND:
        if path is not None:
            raise ValueError(f"a command {what} names a prefix, not a path")
        return (width, _words(prefix, f"a command {what}'s prefix"), None)
    if prefix is not None:
        raise ValueError(f"a {width} {what} names no prefix")
    if width is Width.EXACT:
        if path is not None:
            raise ValueError(f"an exact {what} names no path")
        return EXACT
    return (width, None, _path(path, f"a {width} {what}'s path"))


def parse_offers(value: Any) -> Offers:
    """A binding's `offers`, checked strictly; raises ValueError saying what is wrong."""
    if type(value) is not dict or not value.keys() <= _OFFERS_KEYS:
        raise ValueError(f"offers is an object with {' and '.join(sorted(_OFFERS_KEYS))} only")
    why = value.get("mustAsk", [])
    if type(why) is not list or len(why) > MUST_ASK_MAX_REASONS:
        raise ValueError(f"offers' mustAsk is a list of up to {MUST_ASK_MAX_REASONS} texts")
    if not all(type(reason) is str and reason for reason in why):
        raise ValueError("offers' mustAsk reasons are non-empty texts")
    raw = value.get("widths")
    if type(raw) is not list or not 1 <= len(raw) <= OFFERS_MAX_WIDTHS:
        raise ValueError(f"offers' widths is a list of 1 to {OFFERS_MAX_WIDTHS} offers")
    widths: list[Offer] = []
    for item in raw:
        if type(item) is not dict or not item.keys() <= _OFFER_KEYS:
            raise ValueError(f"an offer is an object with {', '.join(sorted(_OFFER_KEYS))}")
        width, prefix, path = _target(item, "offer")
        scopes = item.get("scopes")
        if type(scopes) is not list or not scopes:
            raise ValueError("an offer's scopes is a non-empty list")
        if not all(type(s) is str and s in _SCOPE_BY_VALUE for s in scopes):
            raise ValueError(f"an offer's scopes are each one of: {', '.join(Scope)}")
        if len(set(scopes)) != len(scopes):
            raise ValueError("an offer names each scope once")
        if width is not Width.EXACT and Scope.ONCE in scopes:
            raise ValueError(f"a {width} offer is for {', '.join(WIDE_SCOPES)}, not once")
        offer = Offer(width, tuple(_SCOPE_BY_VALUE[s] for s in scopes), prefix, path)
        if any(o.target == offer.target for o in widths):
            raise ValueError("an offer is made once")
        widths.append(offer)
    if widths[0].width is not Width.EXACT:
        raise ValueError("the first offer is the exact call's")
    offers = Offers(must_ask=tuple(why), widths=tuple(widths))
    if offers.must_ask and offers.widths != must_ask_offers(offers.must_ask).widths:
        raise ValueError("a must-ask call is offered once for the exact call only")
    return offers


def offers_json(offers: Offers) -> dict[str, Any]:
    """*offers* as a binding's `offers` holds them."""
    return {
        "mustAsk": list(offers.must_ask),
        "widths": [
            {
                "name": offer.width.value,
                **({"prefix": list(offer.prefix)} if offer.prefix is not None else {}),
                **({"path": offer.path} if offer.path is not None else {}),
                "scopes": [scope.value for scope in offer.scopes],
            }
            for offer in offers.widths
        ],
    }


def parse_width(value: Any) -> AnswerWidth:
    """An answer's `width`, checked strictly; raises ValueError saying what is wrong."""
    if type(value) is not dict or not value.keys() <= _WIDTH_KEYS:
        raise ValueError(f"width is an object with {', '.join(sorted(_WIDTH_KEYS))} only")
    return _target(value, "width")


def width_json(width: AnswerWidth) -> dict[str, Any] | None:
    """An answer's `width` for (width, prefix, path); None for the exact call (left out)."""
    name, prefix, path = width
    if name is Width.EXACT:
        return None
    return {
        "name": name.value,
        **({"prefix": list(prefix)} if prefix is not None else {}),
        **({"path": path} if path is not None else {}),
    }


def offers_of(binding: Any) -> Offers:
    """What a request with *binding* offers (a binding without `offers`: every scope of the
    exact call). A binding's offers were checked when it was read."""
    raw = getattr(binding, "offers", None)
    return UNSAID_OFFERS if raw is None else parse_offers(raw)


def answer_width(raw: Mapping[str, Any] | None) -> AnswerWidth:
    """The width an answer's `width` names (none: the exact call)."""
    return EXACT if raw is None else parse_width(raw)


# --- what an answer may say ---------------------------------------------------------------


def width_words(width: AnswerWidth) -> str:
    """A width in words, as a refusal and a face say it."""
    name, prefix, path = width
    if name is Width.COMMAND:
        return f"`{' '.join(prefix or ())} *` (this command with any arguments)"
    if name is Width.FILE:
        return f"edits to {path}"
    if name is Width.PROJECT:
        return f"edits in {path}"
    return "the exact call"


def offered_words(offers: Offers) -> str:
    """What *offers* offers, in one sentence's words (for a refusal's remedy)."""
    parts = [f"{_either(offer.scopes)} for {width_words(offer.target)}" for offer in offers.widths]
    return "; ".join(parts) + "; or no"


def _either(scopes: tuple[Scope, ...]) -> str:
    """`once, session, project or always`."""
    *rest, last = (scope.value for scope in scopes)
    return f"{', '.join(rest)} or {last}" if rest else last


def width_problem(
    binding: Any, decision: str, width: Mapping[str, Any] | None
) -> tuple[str, str] | None:
    """Why *decision* with *width* (an answer's `width`; None: the exact call) is not offered
    by the request with *binding*, and the remedy; None if it is. *decision* is one the kind
    takes (checked first)."""
    try:
        named = answer_width(width)
    except ValueError as exc:
        return (f"its width is malformed: {exc}", "Name a width the request offers.")
    offers = offers_of(binding)
    if decision == Decision.NO:
        if named != EXACT:
            return ("a denial has no width", "Leave the width out.")
        return None
    offer = offers.find(named)
    if offer is not None and decision in offer.scopes:
        return None
    if offers.must_ask:
        return (
            f"{decision!r} for {width_words(named)} is not offered: this call is asked every "
            f"time ({'; '.join(offers.must_ask)}), and no grant covers it",
            "Answer once (this call only) or no.",
        )
    return (
        f"{decision!r} for {width_words(named)} is not offered for this request",
        f"It offers: {offered_words(offers)}.",
    )


def answers_offered(binding: Any) -> list[dict[str, Any]]:
    """Every approving answer the request offers, narrowest first (the exact call `once`
    first; the last is the widest), each as `{"decision": …, "width": {…}}` (no `width`:
    the exact call). `no` is always offered besides. A script takes one whole and answers
    with it (docs/channel.md, "Widths")."""
    offers = offers_of(binding)
    order = {scope: rank for rank, scope in enumerate(Scope)}
    answers: list[tuple[int, int, dict[str, Any]]] = []
    for rank, offer in enumerate(offers.widths):
        shown = width_json(offer.target)
        for scope in offer.scopes:
            answer: dict[str, Any] = {"decision": scope.value}
            if shown is not None:
                answer["width"] = shown
            answers.append((order[scope], rank, answer))
    return [answer for _, _, answer in sorted(answers, key=lambda a: (a[0], a[1]))]


def pick_width(
    binding: Any, width: Width, prefix: tuple[str, ...] | None, path: str | None
) -> AnswerWidth:
    """The width a person names by its name alone where the request offers one of that name
    (else by its *prefix* or *path* too): what a face's `--width` resolves to. Raises
    ValueError saying what the request offers."""
    if width is Width.EXACT:
        return EXACT
    offers = offers_of(binding)
    named = [o for o in offers.widths if o.width is width]
    if prefix is not None or path is not None:
        return (width, prefix, path)  # as named: checked against the offers when answered
    if len(named) == 1:
        return named[0].target
    if not named:
        why = f" (it is asked every time: {'; '.join(offers.must_ask)})" if offers.must_ask else ""
        raise ValueError(
            f"no {width} width is offered for this request{why}. It offers: "
            f"{offered_words(offers)}."
        )
    how = "--prefix WORDS" if width is Width.COMMAND else "--path PATH"
    choices = ", ".join(width_words(o.target) for o in named)
    raise ValueError(f"{len(named)} {width} widths are offered ({choices}): name one with {how}.")
