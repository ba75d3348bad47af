"""Answers of the right width (issue 57): what a request offers, what an answer may name, the
grants wider answers make and what each covers; a must-ask call offered `once` and `no` only.
Real channels, grant files and processes; the CLI answered from a real terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import ANSWER_LINE, in_terminal, run_wisp

from pending import (
    Channel,
    CommandBinding,
    InvalidDecision,
    Kind,
    Scope,
    Width,
    answers_offered,
    from_json,
    to_json,
)
from pending._json import DecodeError
from wisp._asking import Asker
from wisp.kinds.command_gate import ApprovalGate, Widths, offers_for
from wisp.policy.shell import Line, Redirect, Simple, parse_line
from wisp.policy.widths import grant_words
from wisp.stores.grants import GrantStore

NETWORK = ("it reaches the network (curl)",)
ASKER = Path(__file__).with_name("widths_asker.py")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project: a directory of the person's with a real `.git`."""
    root = tmp_path / "shop"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    return root.resolve()


@pytest.fixture
def asker(channel: Channel) -> Iterator[Asker]:
    with Asker(channel, entry_point="approvals") as a:
        yield a


def answer_with(channel: Channel, request_id: str, decision: str, width: Any = None) -> None:
    channel.answer(request_id, decision, kind=Kind.COMMAND, via="cli", width=width)


def one(words: tuple[str, ...], *redirects: Redirect, **kw: Any) -> Simple:
    return Simple(words=words, cwd="/srv", redirects=redirects, **kw)


class TestWhatARequestOffers:
    def test_a_command_offers_its_prefix_beside_the_exact_call(self) -> None:
        """Beside once/session/project/always for the exact call, `npm test *` for the
        session or standing; the widest answer offered is last."""
        offers = offers_for(Widths(prefixes=(("npm", "test"),)), Kind.COMMAND)
        binding = CommandBinding(command="npm test", cwd="/srv", offers=offers)
        answers = answers_offered(binding)
        assert answers[0] == {"decision": "once"}
        assert answers[-1] == {
            "decision": "always",
            "width": {"name": "command", "prefix": ["npm", "test"]},
        }
        assert {
            "decision": "once",
            "width": {"name": "command", "prefix": ["npm", "test"]},
        } not in (answers)

    def test_a_must_ask_call_offers_once_and_says_why(self) -> None:
        """Its prefixes are not offered; only `once` for the exact call (and `no`), with why.
        The same call read as not must-ask is offered its prefix (the control)."""
        widths = Widths(must_ask=NETWORK, prefixes=(("curl", "x"),))
        offers = offers_for(widths, Kind.COMMAND)
        assert offers == {
            "mustAsk": list(NETWORK),
            "widths": [{"name": "exact", "scopes": ["once"]}],
        }
        assert answers_offered(CommandBinding(command="c", cwd="/", offers=offers)) == [
            {"decision": "once"}
        ]
        plain = offers_for(widths._replace(must_ask=()), Kind.COMMAND)
        assert plain is not None and len(plain["widths"]) == 2

    def test_an_edit_offers_this_file_and_this_project(self, project: Path) -> None:
        """An edit inside the project: "edits to this file" and "edits in this project"; one
        outside it: the file only."""
        inside = str(project / "src" / "a.py")
        offers = offers_for(Widths(edit_paths=(inside,), project=str(project)), Kind.TOOL)
        assert offers is not None
        names = [w["name"] for w in offers["widths"]]
        assert names == ["exact", "file", "project"]
        outside = offers_for(Widths(edit_paths=("/etc/hosts",), project=str(project)), Kind.TOOL)
        assert outside is not None and [w["name"] for w in outside["widths"]] == ["exact", "file"]

    def test_a_long_line_offers_what_a_record_holds(self) -> None:
        """A line of a hundred commands, forty must-ask findings: the offers stay within what
        a record may hold (the first prefixes, the first reasons), and read back."""
        many = Widths(prefixes=tuple(("make", f"t{n}") for n in range(100)))
        offers = offers_for(many, Kind.COMMAND)
        assert offers is not None and len(offers["widths"]) == 1 + 8
        binding = to_json(CommandBinding(command="make …", cwd="/", offers=offers))
        assert from_json(binding, CommandBinding).offers == offers
        why = tuple(f"finding {n}" for n in range(40))
        must = offers_for(Widths(must_ask=why), Kind.COMMAND)
        assert must is not None and len(must["mustAsk"]) == 32
        assert from_json({**binding, "offers": must}, CommandBinding).offers == must

    def test_no_widths_offers_what_approvals_always_took(self) -> None:
        """A request filed without widths (an earlier build's, or an asker that gives none)
        has no `offers`, and offers every scope of the exact call."""
        assert offers_for(None, Kind.COMMAND) is None
        binding = CommandBinding(command="make", cwd="/srv")
        assert [a["decision"] for a in answers_offered(binding)] == [s.value for s in Scope]
        assert "offers" not in to_json(binding)

    @pytest.mark.parametrize(
        "offers",
        [
            {"mustAsk": ["net"], "widths": [{"name": "exact", "scopes": ["once", "always"]}]},
            {"widths": [{"name": "command", "prefix": ["a"], "scopes": ["always"]}]},
            {
                "widths": [
                    {"name": "exact", "scopes": ["once"]},
                    {"name": "file", "path": "rel", "scopes": ["always"]},
                ]
            },
            {"widths": [{"name": "exact", "scopes": ["sometimes"]}]},
            {"widths": [{"name": "exact", "scopes": ["once"]}], "more": 1},
        ],
        ids=["must-ask-wider", "no-exact-first", "relative-path", "unknown-scope", "unknown-key"],
    )
    def test_a_malformed_offer_makes_its_record_unreadable(self, offers: Any) -> None:
        """Strict: a must-ask call offered wider, a list without the exact call first, a path
        not absolute, an unknown scope or key: the binding is refused as it is read. The same
        binding with well-formed offers reads (the control)."""
        good = {
            "command": "c",
            "cwd": "/",
            "offers": {"widths": [{"name": "exact", "scopes": ["once"]}]},
        }
        assert from_json(good, CommandBinding).offers == good["offers"]
        with pytest.raises(DecodeError):
            from_json({**good, "offers": offers}, CommandBinding)


class TestAnsweringAWidth:
    def test_a_must_ask_call_answered_wider_is_refused(
        self, asker: Asker, channel: Channel
    ) -> None:
        """`always` (or a prefix) for a must-ask call is refused with why and what to answer,
        nothing written; `once` is taken."""
        gate = ApprovalGate(asker, timeout_s=30)
        request = gate.file("curl x", "/srv", widths=Widths(must_ask=NETWORK))
        for decision, width in [
            ("always", None),
            ("session", {"name": "command", "prefix": ["curl", "x"]}),
        ]:
            with pytest.raises(InvalidDecision) as refused:
                answer_with(channel, request.id, decision, width)
            said = str(refused.value)
            assert "asked every time (it reaches the network (curl))" in said
            assert "Answer once (this call only) or no." in said
        assert channel.status(request.id).answer is None
        answer_with(channel, request.id, "once")
        approval = gate.verdict(asker.wait(request.id))
        assert approval.approved and approval.scope is Scope.ONCE and approval.grant is None

    def test_a_width_not_offered_is_refused_naming_what_is(
        self, asker: Asker, channel: Channel
    ) -> None:
        """A prefix the request did not offer is refused, and the refusal lists the answers
        it does offer."""
        gate = ApprovalGate(asker, timeout_s=30)
        request = gate.file("npm test", "/srv", widths=Widths(prefixes=(("npm", "test"),)))
        with pytest.raises(InvalidDecision) as refused:
            answer_with(channel, request.id, "always", {"name": "command", "prefix": ["npm"]})
        assert "It offers: once, session, project or always for the exact call" in str(
            refused.value
        )
        assert "`npm test *`" in str(refused.value)
        gate.asker.withdraw(request.id)

    def test_an_answer_that_skipped_the_check_is_not_applied(
        self, asker: Asker, channel: Channel
    ) -> None:
        """An `always` written to a must-ask request's slot by a build that could not read its
        offers (here: published past the check) settles `failed`: the call is not approved,
        and no grant is kept. `once` written the same way is applied (the control)."""
        gate = ApprovalGate(asker, timeout_s=30)
        for decision, approved in [("always", False), ("once", True)]:
            request = gate.file("curl x", "/srv", widths=Widths(must_ask=NETWORK))
            channel._publish_answer(channel._new_answer(request, decision, via="cli"), request)
            approval = gate.verdict(asker.wait(request.id))
            assert approval.approved is approved
            assert approval.grant is None
        assert not (channel.home / "grants.json").exists()

    def test_an_old_answer_is_the_exact_call(self, asker: Asker, channel: Channel) -> None:
        """An answer with no `width` approves the exact call, as answers always did: the
        grant it makes covers that command and not another with its first words."""
        gate = ApprovalGate(asker, timeout_s=30)
        request = gate.file("npm test", "/srv", widths=Widths(prefixes=(("npm", "test"),)))
        answer_with(channel, request.id, "always")
        approval = gate.verdict(asker.wait(request.id))
        assert approval.grant is not None and approval.grant.width is Width.EXACT
        store = GrantStore(channel.home)
        assert store.covering("npm test", "/srv", words=("npm", "test")) is not None
        assert store.covering("npm test -u", "/srv", words=("npm", "test", "-u")) is None


class TestCommandGrants:
    """A `command` grant, made by an answer, as the store matches it."""

    @pytest.fixture
    def store(self, asker: Asker, channel: Channel) -> GrantStore:
        gate = ApprovalGate(asker, timeout_s=30)
        request = gate.file("npm test", "/srv", widths=Widths(prefixes=(("npm", "test"),)))
        answer_with(channel, request.id, "always", {"name": "command", "prefix": ["npm", "test"]})
        approval = gate.verdict(asker.wait(request.id))
        assert approval.grant is not None and approval.grant.pattern == "npm test *"
        return GrantStore(channel.home)

    def test_it_covers_the_command_with_other_arguments(self, store: GrantStore) -> None:
        """`npm test -u` is covered; so is `npm test` itself."""
        assert store.covering("npm test -u", "/srv", words=("npm", "test", "-u")) is not None
        assert store.covering("npm test", "/elsewhere", words=("npm", "test")) is not None

    def test_it_matches_words_not_text(self, store: GrantStore) -> None:
        """`npm testx` and `npm` alone are other commands."""
        assert store.covering("npm testx", "/srv", words=("npm", "testx")) is None
        assert store.covering("npm", "/srv", words=("npm",)) is None

    @pytest.mark.parametrize(
        "line",
        [
            # npm test; rm -rf x
            Line("npm test; rm -rf x", (one(("npm", "test")), one(("rm", "-rf", "x")))),
            # npm test > ~/x
            Line("npm test > ~/x", (one(("npm", "test"), Redirect(">", "~/x", writes=True)),)),
            # npm test && curl x | sh
            Line(
                "npm test && curl x | sh",
                (one(("npm", "test")), one(("curl", "x")), one(("sh",), piped_from=("curl", "x"))),
            ),
            # npm test $(rm -rf x)
            Line(
                "npm test $(rm -rf x)",
                (
                    one(("npm", "test", "$(rm -rf x)"), expanded=(2,)),
                    one(("rm", "-rf", "x"), substituted=True),
                ),
            ),
            # npm test &
            Line("npm test &", (one(("npm", "test"), background=True),)),
            # eval npm test (the parser could not read it fully)
            Line(
                "eval 'npm test'", (one(("eval", "npm test")),), unread="eval runs text as a line"
            ),
        ],
        ids=["list", "redirect", "and-pipe", "substitution", "background", "unread"],
    )
    def test_it_never_spans_a_list_a_pipe_or_a_redirection(
        self, store: GrantStore, line: Line
    ) -> None:
        """A line that is not ONE plain simple command gives no words to match: the grant
        covers none of these, only an exact grant could."""
        words = grant_words(line)
        assert words is None
        assert store.covering(line.text, "/srv", words=words) is None

    def test_joining_output_streams_is_no_redirection(self, store: GrantStore) -> None:
        """`npm test 2>&1` writes no file: covered (the control for the redirection above)."""
        line = Line("npm test 2>&1", (one(("npm", "test"), Redirect("2>&", "1", writes=False)),))
        assert grant_words(line) == ("npm", "test")
        assert store.covering(line.text, "/srv", words=grant_words(line)) is not None

    def test_a_word_the_parser_cannot_know_is_never_part_of_the_prefix(self) -> None:
        """`npm $X …`: the words stop before `$X`, so no `npm test` grant can match it."""
        line = Line("npm $X", (one(("npm", "$X"), expanded=(1,)),))
        assert grant_words(line) == ("npm",)

    def test_a_must_ask_call_is_covered_by_no_grant(self, store: GrantStore) -> None:
        """Whatever the grants, a call the caller says is must-ask is asked."""
        words = ("npm", "test", "-u")
        assert store.covering("npm test -u", "/srv", words=words) is not None
        assert store.covering("npm test -u", "/srv", words=words, must_ask=True) is None

    def test_revoked_it_covers_nothing_in_a_store_that_read_it(self, store: GrantStore) -> None:
        """A long-lived gate's store, which has read wide-grants.json, sees the revoke."""
        words = ("npm", "test", "-u")
        grant = store.covering("npm test -u", "/srv", words=words)
        assert grant is not None and grant.id is not None
        assert store.revoke(grant.id) is not None
        assert store.covering("npm test -u", "/srv", words=words) is None

    def test_it_is_kept_apart_from_the_exact_grants(self, store: GrantStore) -> None:
        """In wide-grants.json: grants.json (which earlier builds read as exact commands)
        holds no `npm test *` that could match the literal line."""
        home = store.home
        assert not (home / "grants.json").exists()
        kept = json.loads((home / "wide-grants.json").read_text())["grants"]
        assert [(g["width"], g["prefix"]) for g in kept] == [("command", ["npm", "test"])]
        assert store.covering("npm test *", "/srv") is None


def approve_edit(
    asker: Asker, channel: Channel, project: Path, path: Path, decision: str, width: str
) -> ApprovalGate:
    gate = ApprovalGate(asker, timeout_s=30)
    widths = Widths(edit_paths=(str(path),), project=str(project))
    request = gate.file_tool("Edit", {"file_path": str(path)}, str(project), widths=widths)
    named = {"name": width, "path": str(path if width == "file" else project)}
    channel.answer(request.id, decision, kind=Kind.TOOL, via="cli", width=named)
    approval = gate.tool_verdict(asker.wait(request.id))
    assert approval.approved and approval.grant is not None
    return gate


def edit(gate: ApprovalGate, project: Path, path: Path | str) -> bool:
    tool_input = {"file_path": str(path), "old_string": "a", "new_string": "b"}
    return gate.granted_tool("Edit", tool_input, str(project), edits=(str(path),)) is not None


class TestEditGrants:
    def test_a_file_grant_covers_the_next_edit_of_that_file_only(
        self, asker: Asker, channel: Channel, project: Path
    ) -> None:
        """Another edit of src/a.py is covered; an edit of src/b.py is not."""
        a = project / "src" / "a.py"
        gate = approve_edit(asker, channel, project, a, "always", "file")
        assert edit(gate, project, a)
        assert not edit(gate, project, project / "src" / "b.py")

    def test_a_file_grant_does_not_follow_a_link_put_in_its_place(
        self, asker: Asker, channel: Channel, project: Path, tmp_path: Path
    ) -> None:
        """src/a.py replaced by a link to a file elsewhere is another file: asked."""
        a = project / "src" / "a.py"
        a.write_text("x")
        gate = approve_edit(asker, channel, project, a, "always", "file")
        assert edit(gate, project, a)
        a.unlink()
        (tmp_path / "elsewhere").write_text("y")
        a.symlink_to(tmp_path / "elsewhere")
        assert not edit(gate, project, a)

    def test_a_project_grant_covers_edits_inside_the_project_only(
        self, asker: Asker, channel: Channel, project: Path, tmp_path: Path
    ) -> None:
        """Any file under the project is covered (a session grant, kept in the gate); a file
        outside it, under `.git/`, or `.env`, is not."""
        gate = approve_edit(asker, channel, project, project / "src" / "a.py", "session", "project")
        assert edit(gate, project, project / "README.md")
        assert edit(gate, project, project / "src" / "deep" / "new.py")
        assert not edit(gate, project, tmp_path / "other.py")
        assert not edit(gate, project, "/etc/hosts")
        assert not edit(gate, project, project / ".git" / "hooks" / "pre-commit")
        assert not edit(gate, project, project / ".env")

    def test_an_edit_grant_never_covers_a_must_ask_call(
        self, asker: Asker, channel: Channel, project: Path
    ) -> None:
        """The same edit, said to be must-ask, is asked."""
        a = project / "src" / "a.py"
        gate = approve_edit(asker, channel, project, a, "project", "project")
        assert edit(gate, project, a)
        assert gate.granted_tool("Edit", {}, str(project), edits=(str(a),), must_ask=True) is None


class TestSessionGrantsKeptForAThread:
    def test_a_wide_session_approval_lasts_for_its_thread_only(
        self, asker: Asker, channel: Channel, project: Path
    ) -> None:
        """A hook's asker lives for one call: a `session` "edits in this project" is kept for
        its thread in the store, covers that thread's next edit in another gate, not another
        thread's, and goes when the thread ends."""
        gate = ApprovalGate(asker, timeout_s=30)
        a = project / "src" / "a.py"
        widths = Widths(edit_paths=(str(a),), project=str(project))
        request = gate.file_tool(
            "Edit", {"file_path": str(a)}, str(project), thread="t1", widths=widths
        )
        named = {"name": "project", "path": str(project)}
        channel.answer(request.id, "session", kind=Kind.TOOL, via="cli", width=named)
        ending = asker.wait(request.id)
        kept = gate.remember_for_thread(gate.tool_verdict(ending), ending)
        assert kept.grant is not None and kept.grant.thread == "t1"
        later = ApprovalGate(asker, timeout_s=30)  # another call's gate: no memory of it
        b = str(project / "b.py")
        assert later.granted_tool("Edit", {}, str(project), thread="t1", edits=(b,)) is not None
        assert later.granted_tool("Edit", {}, str(project), thread="t2", edits=(b,)) is None
        assert GrantStore(channel.home).end_session("t1") == 1
        assert later.granted_tool("Edit", {}, str(project), thread="t1", edits=(b,)) is None


class Asking:
    """tests/widths_asker.py in a process of its own, read until it says how to answer."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(ASKER), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=os.environ.copy(),
        )
        assert self.process.stderr is not None
        line = self.process.stderr.readline()
        found = ANSWER_LINE.search(line)
        assert found, line + self.process.stderr.read()
        self.id = found.group(1)

    def verdict(self) -> dict[str, Any]:
        out, err = self.process.communicate(timeout=60)
        assert self.process.returncode == 0, err
        result: dict[str, Any] = json.loads(out)
        return result


class TestTheCli:
    def test_approve_with_a_width(self, home: Path, project: Path) -> None:
        """`--scope always --width command` approves `npm test *`: said back, and listed."""
        asking = Asking(
            "command", str(project), '{"prefixes": [["npm", "test"]]}', "--", "npm", "test"
        )
        code, out = in_terminal(
            "approvals", "approve", asking.id, "--scope", "always", "--width", "command"
        )
        assert code == 0, out
        assert (
            f"approved always for `npm test *` (this command with any arguments) ({asking.id})"
            in " ".join(out.split())
        )
        verdict = asking.verdict()
        assert verdict["approved"] and verdict["width"] == "command" and verdict["grant"]
        listed = run_wisp("approvals", "grants", "--json")
        (grant,) = json.loads(listed.stdout)
        assert grant["pattern"] == "npm test *" and grant["width"] == "command"
        assert grant["scope"] == "always" and grant["request"] == asking.id
        assert grant["id"] == verdict["grant"] and grant["user"] and grant["grantedAt"]
        table = run_wisp("approvals", "grants", env={"COLUMNS": "200"}).stdout
        assert grant["id"] in table and "npm test *" in table and "command" in table
        assert f"request {asking.id}" in table
        revoked = run_wisp("approvals", "revoke", grant["id"])
        assert revoked.returncode == 0 and "npm test * will be asked about again" in revoked.stdout
        assert json.loads(run_wisp("approvals", "grants", "--json").stdout) == []

    def test_a_must_ask_call_approved_wider_is_refused_with_exit_1(
        self, home: Path, project: Path
    ) -> None:
        """`--scope always`, or `--width command`, on a must-ask call: exit 1, why and what to
        answer, nothing written; `approve` (once) then goes through."""
        asking = Asking(
            "command", str(project), json.dumps({"mustAsk": NETWORK}), "--", "curl", "x"
        )
        code, out = in_terminal("approvals", "approve", asking.id, "--scope", "always")
        said = " ".join(out.split())
        assert code == 1, out
        assert "asked every time (it reaches the network (curl))" in said
        assert "Answer once (this call only) or no." in said
        code, out = in_terminal(
            "approvals", "approve", asking.id, "--scope", "session", "--width", "command"
        )
        assert code == 1 and "no command width is offered" in " ".join(out.split()), out
        code, out = in_terminal("approvals", "approve", asking.id)
        assert code == 0, out
        assert asking.verdict() == {
            "approved": True,
            "scope": "once",
            "grant": None,
            "width": None,
            "reason": None,
        }

    def test_tools_approve_with_the_project_width(self, home: Path, project: Path) -> None:
        """`wisp tools approve ID --as project --width project`: edits in this project."""
        path = str(project / "src" / "a.py")
        widths = json.dumps({"editPaths": [path], "project": str(project)})
        asking = Asking("tool", str(project), widths, "--", "Edit", json.dumps({"file_path": path}))
        code, out = in_terminal(
            "tools", "approve", asking.id, "--as", "project", "--width", "project"
        )
        assert code == 0, out
        verdict = asking.verdict()
        assert verdict["width"] == "project" and verdict["scope"] == "project"
        (grant,) = json.loads(run_wisp("approvals", "grants", "--json").stdout)
        assert grant["pattern"] == f"edits in {project}" and grant["path"] == str(project)

    def test_show_says_what_a_request_offers(self, home: Path, project: Path) -> None:
        """`wisp show ID` names the must-ask finding and the answers offered; `--json`'s
        binding carries `offers` for a script."""
        asking = Asking(
            "command", str(project), json.dumps({"mustAsk": NETWORK}), "--", "curl", "x"
        )
        shown = run_wisp("show", asking.id, env={"COLUMNS": "200"}).stdout
        assert "it reaches the network (curl)" in shown
        assert "once for the exact call; or no" in shown
        raw = json.loads(run_wisp("show", asking.id, "--json").stdout)
        assert raw["binding"]["offers"]["mustAsk"] == list(NETWORK)
        code, out = in_terminal("approvals", "deny", asking.id)
        assert code == 0, out
        assert asking.verdict()["approved"] is False


class TestTheParser:
    """Once the shell parser is in (wisp.policy.shell.parse_line), the lines above read by it."""

    @pytest.fixture(autouse=True)
    def _parser(self) -> None:
        from wisp.policy.shell import parse_line

        try:
            parse_line("true", "/")
        except NotImplementedError:
            pytest.skip("the shell parser is not in yet (issue 57's shell work)")

    @pytest.mark.parametrize(
        ("line", "words"),
        [
            ("npm test -u", ("npm", "test", "-u")),
            ("npm test 2>&1", ("npm", "test")),
            ("npm test; rm -rf x", None),
            ("npm test > ~/x", None),
            ("npm test && curl x | sh", None),
            ("npm test $(rm -rf x)", None),
            ("npm test &", None),
            ("X=1 npm test", None),
            ("LD_PRELOAD=/tmp/x.so npm test", None),
            ("env npm test", None),
            ("bash -c 'npm test'", None),
            ("timeout 5 npm test", None),
            ("npm test 2>/dev/null", ("npm", "test")),  # thrown away: no file written
        ],
    )
    def test_a_line_gives_words_only_when_it_is_one_simple_command(
        self, line: str, words: tuple[str, ...] | None
    ) -> None:
        """As parsed by the real grammar: a grant on `npm test` covers the first two only."""
        from wisp.policy.shell import parse_line

        assert grant_words(parse_line(line, "/srv")) == words


class TestTheTui:
    """The TUI's command dialog over a real relay: `w` steps through the widths offered."""

    def test_w_then_a_approves_the_command_width_and_must_ask_takes_y_only(
        self, home: Path, asker: Asker, channel: Channel
    ) -> None:
        """On a request offering `npm test *`, `w` then `a` answers always for it; on a
        must-ask call `a` is refused in the dialog (nothing sent), saying why, and `y` is
        taken."""
        from test_tui import said, select, tui

        from wisp.tui._dialogs import CommandDialog

        gate = ApprovalGate(asker, timeout_s=60)
        wide = gate.file("npm test", "/srv", widths=Widths(prefixes=(("npm", "test"),)))
        must = gate.file("curl x", "/srv", widths=Widths(must_ask=NETWORK))

        async def body(app: Any, pilot: Any) -> None:
            from test_tui import until

            await select(app, pilot, wide.id)
            await pilot.press("enter")
            dialog = app.screen
            assert isinstance(dialog, CommandDialog)
            assert "[w]idth: this call" in dialog.keys_text()
            await pilot.press("w")
            assert "[w]idth: npm test *" in dialog.keys_text()
            await pilot.press("a")
            await until(pilot, lambda: said(app, f"({wide.id}); the asker has it"))
            await select(app, pilot, must.id)
            await pilot.press("enter")
            dialog = app.screen
            assert isinstance(dialog, CommandDialog)
            assert dialog.keys_text() == CommandDialog.MUST_ASK_KEYS
            await pilot.press("a")
            assert app.screen is dialog and "always is not offered" in dialog.note()
            assert "asked every time: it reaches the network (curl)" in dialog.note()
            await pilot.press("y")
            await until(pilot, lambda: said(app, f"({must.id}); the asker has it"))

        tui(home, body)
        answer = channel.status(wide.id).answer
        assert answer is not None and answer.decision == "always"
        assert answer.width == {"name": "command", "prefix": ["npm", "test"]}
        answer = channel.status(must.id).answer
        assert answer is not None and (answer.decision, answer.width) == ("once", None)


def _post_answer(
    url: str, credential: str, request_id: str, form: dict[str, str]
) -> tuple[int, str]:
    """An answer as the paired device's page posts it (its credential, its CSRF token)."""
    import urllib.error
    import urllib.parse
    import urllib.request

    from wisp.web._app import CREDENTIAL_HEADER, csrf_token

    body = urllib.parse.urlencode({"csrf": csrf_token(credential), **form}).encode()
    request = urllib.request.Request(
        f"{url}/r/{request_id}/answer",
        data=body,
        headers={CREDENTIAL_HEADER: credential, "Accept": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


def _board(url: str, credential: str) -> str:
    import urllib.request

    from wisp.web._app import CREDENTIAL_HEADER

    request = urllib.request.Request(f"{url}/board", headers={CREDENTIAL_HEADER: credential})
    with urllib.request.urlopen(request, timeout=30) as reply:
        return str(json.loads(reply.read())["html"])


class TestTheWebPage:
    """`wisp web` served for real, answered as a paired device's page posts (no browser)."""

    def test_a_width_button_and_a_must_ask_call_with_once_only(
        self, home: Path, project: Path
    ) -> None:
        """The card offers `npm test *` for session, project or always and its Always
        approves that width; a must-ask call's card says why and has no scope buttons, and
        `always` posted for it anyway is refused (400, nothing written), `once` taken."""
        from webproc import web_server

        from wisp.stores.devices import DeviceStore

        home.mkdir(mode=0o700, exist_ok=True)
        store = DeviceStore(home)
        _device, credential = store.pair(store.new_pairing()[0], "phone")
        wide = Asking(
            "command", str(project), '{"prefixes": [["npm", "test"]]}', "--", "npm", "test"
        )
        must = Asking("command", str(project), json.dumps({"mustAsk": NETWORK}), "--", "curl", "x")
        with Channel.open(home) as channel:
            digests = {a.id: channel.status(a.id).request.binding_digest for a in (wide, must)}
        with web_server(home) as server:
            shown = _board(server.url, credential)
            wide_card, must_card = (
                shown.split(f'id="r-{a.id}"')[1].split('id="r-')[0] for a in (wide, must)
            )
            assert "or approve `npm test *` (this command with any arguments) for" in wide_card
            assert "This session" in wide_card and "Always" in wide_card
            assert "Asked every time: it reaches the network (curl)" in must_card
            assert "This session" not in must_card and "Approve once" in must_card
            width = json.dumps({"name": "command", "prefix": ["npm", "test"]})
            code, said = _post_answer(
                server.url,
                credential,
                wide.id,
                {
                    "digest": digests[wide.id],
                    "kind": "command",
                    "decision": "always",
                    "width": width,
                },
            )
            assert code == 200, said
            form = {"digest": digests[must.id], "kind": "command", "decision": "always"}
            code, said = _post_answer(server.url, credential, must.id, form)
            assert code == 400 and "asked every time" in said, said
            code, said = _post_answer(server.url, credential, must.id, {**form, "decision": "once"})
            assert code == 200, said
        assert wide.verdict()["width"] == "command"
        assert must.verdict()["scope"] == "once"


class TestTheMcpDialog:
    def test_a_must_ask_command_says_so_and_is_approved_once_only(
        self, asker: Asker, channel: Channel
    ) -> None:
        """The elicitation gives once or no (offered to every call); a must-ask call's dialog
        says why it is asked every time, a plain one says nothing of it (the control)."""
        from wisp.mcp._dialog import command_dialog

        gate = ApprovalGate(asker, timeout_s=30)
        must = gate.file("curl x", "/srv", widths=Widths(must_ask=NETWORK))
        plain = gate.file("make", "/srv", widths=Widths(prefixes=(("make",),)))
        dialog = command_dialog(must)
        assert "asked every time: it reaches the network (curl)" in dialog.message
        assert "asked every time" not in command_dialog(plain).message
        enum = dialog.schema["properties"]["answer"]["enum"]
        assert len(enum) == 2  # approve once, deny: nothing wider


class TestTheDecidersLookUp:
    def test_covering_call_matches_widths_and_never_a_must_ask_call(
        self, asker: Asker, channel: Channel, project: Path
    ) -> None:
        """What the decision asks (StandingGrants.covering_call, not audited): a `command`
        grant by the line's words as the parser reads them, an edits grant by the paths
        edited; a must-ask call by none of them."""
        from wisp.policy.shell import parse_line

        gate = ApprovalGate(asker, timeout_s=30)
        request = gate.file("npm test", str(project), widths=Widths(prefixes=(("npm", "test"),)))
        answer_with(channel, request.id, "session", {"name": "command", "prefix": ["npm", "test"]})
        gate.verdict(asker.wait(request.id))
        approve_edit(asker, channel, project, project / "a.py", "project", "project")

        def shell(line: str, **kw: Any) -> Any:
            words = grant_words(parse_line(line, str(project)))
            return gate.covering_call(
                cwd=str(project), thread=None, command=line, words=words, **kw
            )

        assert shell("npm test -u") is not None
        assert shell("npm test; rm -rf x") is None
        assert shell("npm test > ~/x") is None
        assert shell("npm testx") is None
        assert shell("npm test -u", must_ask=True) is None
        b = str(project / "b.py")
        edit = {"cwd": str(project), "thread": None, "tool": "Write", "tool_input": {}}
        assert gate.covering_call(**edit, edits=(b,)) is not None
        assert gate.covering_call(**edit, edits=("/etc/passwd",)) is None
        assert gate.covering_call(**edit, edits=(b,), must_ask=True) is None


class TestListsOfGrantedCommands:
    """A list or pipeline runs without asking when each part is read-only or covered by a
    `command` grant on its own (wisp.policy.widths.grant_parts): no grant spans `;`, `&&` or
    `|`; a part nothing covers has the whole line asked."""

    def _decided(self, home: Path, project: Path, line: str) -> Any:
        from wisp._entry import EntryPoint
        from wisp.kinds.standing import StandingGrants
        from wisp.policy.decide import Call, decide
        from wisp.policy.reading import Effect

        call = Call(
            harness="claude-code",
            session="s1",
            cwd=str(project),
            project=str(project),
            tool="Bash",
            effect=Effect.SHELL,
            command=line,
        )
        grants = StandingGrants(home, EntryPoint.HOOK)
        return decide(call, home=home, grants=grants)

    def test_each_part_granted_or_read_only_runs(self, tmp_path: Path, project: Path) -> None:
        """With `mix test *` and `git add *` granted for the project: `mix test 2>&1 | tail
        -5` and `git add a && mix test` run; `mix test; make deploy` (a part no grant covers)
        and `mix test > out.txt` (a file written) are asked."""
        from wisp.policy.decide import Decider, Verdict
        from wisp.policy.widths import grant_parts

        home = tmp_path / "home"
        home.mkdir(mode=0o700)
        store = GrantStore(home)
        for prefix in (("mix", "test"), ("git", "add")):
            store.add_wide(
                scope=Scope.PROJECT,
                width=Width.COMMAND,
                cwd=str(project),
                request="r1",
                user="me",
                prefix=prefix,
            )
        # The control: each granted command alone runs.
        assert self._decided(home, project, "mix test --seed 0").verdict is Verdict.ALLOW
        for line in ("mix test 2>&1 | tail -5", "git add a && mix test", "mix test >/dev/null"):
            decided = self._decided(home, project, line)
            assert (decided.verdict, decided.decider) == (Verdict.ALLOW, Decider.GRANT), line
        for line in ("mix test; make deploy", "mix test > out.txt", "X=1 mix test | cat"):
            assert self._decided(home, project, line).verdict is Verdict.ASK, line
        assert grant_parts(parse_line("ls | wc -l", str(project)), str(project)) is None
        assert grant_parts(parse_line("mix test | wc -l", str(project)), None) is None
