"""wisp.policy.reading: a call read for the policy — the reference policy's classes, written
exactly (issue 57): read-only lines, the must-ask classes, the prefixes a person grants, the
paths written, and an edit inside the project or outside it or in a protected place."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import tree_sitter
import tree_sitter_bash
from hypothesis import given, settings
from hypothesis import strategies as st

from wisp.policy.reading import (
    MUST_ASK,
    Class,
    Effect,
    inside,
    protected,
    read_shell,
    read_tool,
    sed_script_reads_only,
)


def _as_text(data: bytes) -> str:
    """Bytes as a hook may receive them: undecodable ones carried as lone surrogates."""
    return data.decode("utf-8", "surrogateescape")


# Shell text that reaches the writing paths: NULs, surrogates, globs, `..`, links.
shell_like = st.lists(
    st.sampled_from(
        [
            *("touch ", "rm -r ", "cp ", "> ", "tee ", "sed -i s/a/b/ ", "cd ", "&& ", "; "),
            *("| ", "a", "..", "/", "*", "?", "[", "~", "$X", "\x00", "\udcff", "\ud800"),
            *("é", " ", "$'\\x00'", "{a,b}", "'", '"', "bash -c ", "xargs ", "find . -exec "),
        ]
    ),
    max_size=16,
).map("".join)


class Project:
    """A project at BASE/proj with a working directory `sub` (a.py, b.py), a link `out` in
    it to a folder outside, a link `in` to the project's `lib`, and the folder outside."""

    def __init__(self, base: Path) -> None:
        self.root = base / "proj"
        self.cwd = self.root / "sub"
        self.cwd.mkdir(parents=True)
        (self.root / ".git").mkdir()
        (self.cwd / "a.py").write_text("")
        (self.cwd / "b.py").write_text("")
        self.outside = base / "elsewhere"
        self.outside.mkdir()
        (self.cwd / "out").symlink_to(self.outside)
        (self.root / "lib").mkdir()
        (self.root / "lib" / "c.py").write_text("")
        (self.cwd / "in").symlink_to(self.root / "lib")

    def read(self, line: str):  # type: ignore[no-untyped-def]
        return read_shell(line, str(self.cwd), str(self.root))


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    yield Project(tmp_path)


READ_ONLY_LINES = [
    "ls",
    "ls -la src/",
    "cat README.md",
    "head -n 40 a.py && tail -5 b.py",
    "grep -rn 'def ' . | head -20",
    "rg -n parse_line wisp/",
    "wc -l *.py",
    "find . -name '*.py' | head",
    "find . -type f -newer a.py -print",
    "git status",
    "git diff",
    "git diff src/ --stat",
    "git log --oneline -10",
    "git show HEAD~1:a.py",
    "git -C .. status --short",
    "git --no-pager log -p -3",
    "git rev-parse --show-toplevel",
    "git ls-files | wc -l",
    "git blame a.py",
    "git grep -n TODO",
    "git branch",
    "git branch -a -v",
    "git branch --list 'feat*'",
    "git branch --contains HEAD",
    "git remote",
    "git remote -v",
    "sed -n '1,20p' a.py",
    "sed -n '/def /,/^$/p' a.py",
    "sed -n -e '5p' -e '/x/{p;q}' a.py",
    "sed -ne 's/a/b/gp' a.py",
    "cd .. && ls",
    "cd sub; pwd",
    "echo hi > /dev/null 2>&1",
    "ls 2>/dev/null | sort | uniq -c | sort -rn",
    "LC_ALL=C sort a.py",
    "GIT_PAGER=cat git log -3",
    "PAGER= TERM=dumb git diff",
    "f=a.py; echo $f",  # (`cat $f` reads a path wisp cannot know: asked, test_policy_holes)
    "which python3 && uname -a && whoami && id && date",
    "jq .name package.json",
    "printf '%s\\n' a b | column -t",
    "du -sh . && stat a.py && file a.py",
    "diff a.py b.py",
    "tree -L 2",
    "realpath a.py; readlink -f a.py; basename /x/y; dirname /x/y",
    "cut -d: -f1 a.py | tr a-z A-Z",  # (`/etc/passwd` is outside: asked)
    "type ls",
    "true && false || echo done",
    "ls \\\n  -la",
    "ls\ncat a.py",
    "cat a.py # then rm -rf /",
    "time ls",
    "timeout 10 git log",
    "bash -c 'ls -la'",
    "",
]


class TestReadShell:
    @pytest.mark.parametrize("line", READ_ONLY_LINES)
    def test_read_only_lines_are_read_only(self, project: Project, line: str) -> None:
        """Lines of read-only commands (the reference's list, sed -n, find without actions,
        git's reading subcommands), in any list or pipe, with `cd`s and writes only to
        /dev/null, are read-only: nothing must be asked, no prefix to grant."""
        reading = project.read(line)
        assert reading.read_only, (reading.classes, reading.notes)
        assert reading.must_ask == ()
        assert reading.prefixes == ()
        assert reading.written == ()

    @pytest.mark.parametrize(
        ("line", "control"),
        [
            ("git -c core.pager=sh log", "git log"),
            ("git -c alias.x=!sh x", "git status"),
            ("git --git-dir=/tmp/x/.git log", "git -C .. log"),
            ("git --exec-path=/tmp log", "git --no-pager log"),
            ("git diff --output=f", "git diff"),
            ("git log --outp=f", "git log"),
            ("git log -p --ext-diff", "git log -p --no-ext-diff"),
            ("git show --textconv HEAD", "git show --no-textconv HEAD"),
            ("git grep -Ovim TODO", "git grep TODO"),
            ("git grep --open-files-in-pager=sh TODO", "git grep -n TODO"),
            ("git branch new", "git branch"),
            ("git branch -d old", "git branch -a"),
            ("git branch -m a b", "git branch -v"),
            ("git remote add o u", "git remote -v"),
            ("git remote show origin", "git remote"),
            ("git commit -m x", "git status"),
            ("git checkout -- a.py", "git diff -- a.py"),
            ("git", "git status"),
            ("find . -delete", "find ."),
            ("find . -exec cat {} ;", "find . -type f"),
            ("find . -execdir ls ;", "find . -name x"),
            ("find . -ok rm {} ;", "find . -print"),
            ("find . -fprint out", "find . -print0"),
            ("find . -fls out", "find . -ls"),
            ("sed -i s/a/b/ a.py", "sed -n s/a/b/p a.py"),
            ("sed -n -i s/a/b/p a.py", "sed -n s/a/b/p a.py"),
            ("sed -ni s/a/b/p a.py", "sed -n s/a/b/p a.py"),
            ("sed s/a/b/ a.py", "sed -n s/a/b/p a.py"),
            ("sed -n '1w out' a.py", "sed -n '1p' a.py"),
            ("sed -n 's/a/b/w out' a.py", "sed -n 's/a/b/p' a.py"),
            ("sed -n 's/a/id/e' a.py", "sed -n 's/a/id/g' a.py"),
            ("sed -n '1e id' a.py", "sed -n '1p' a.py"),
            ("sed -n -f script.sed a.py", "sed -n -e 1p a.py"),
            ("ls > out.txt", "ls > /dev/null"),
            ("ls >> out.txt", "ls 2>&1"),
            ("ls 2> err.txt", "ls 2>/dev/null"),
            ("ls &", "ls"),
            ("echo $(pwd)", "echo pwd"),
            ("echo `pwd`", "echo '`pwd`'"),
            ("X=1 ls", "LC_ALL=C ls"),
            ("PATH=.:$PATH ls", "LANG=C ls"),
            ("PATH=.; ls", "p=.; ls"),
            ("GIT_EXTERNAL_DIFF=./x git diff", "git diff"),
            ("BASH_ENV=./x bash -c ls", "bash -c ls"),
            ("env BASH_ENV=./x sh -c ls", "env LANG=C sh -c ls"),
            ("hash -p ./x ls; ls", "type ls; ls"),
            ("printf -v PATH %s /tmp; ls", "printf %s /tmp; ls"),
            ("echo ${CDPATH:=/tmp}; cd sub; ls", "echo ${CDPATH:-/tmp}; cd sub; ls"),
            ("echo $((i++))", "echo $((i+1))"),
            ("sort -no sorted a.py", "sort -n a.py"),
            ("rg -nz TODO", "rg -n TODO"),
            ("env GIT_PAGER=sh git log", "env LC_ALL=C git log"),
            ("GIT_PAGER=less git log", "GIT_PAGER=cat git log"),
            ("PAGER+=cat git log", "PAGER=cat git log"),
            ("tree -o listing.txt", "tree"),
            ("sort -o sorted a.py", "sort a.py"),
            ("rg --pre ./x TODO", "rg TODO"),
            ("date -s 2020-01-01", "date -u"),
            ("uniq a.py b.txt", "uniq a.py"),
            ("cat <(ls)", "cat a.py"),
            ("ls | xargs cat", "ls | cat"),
            ("cat a.py | tee copy.py", "cat a.py | cat"),
            ("touch x", "ls x"),
            ("npm test", "ls"),
            ("python3 a.py", "cat a.py"),
            ("export X=1", "echo X=1"),
            ("ls; $CMD", "ls; pwd"),
        ],
    )
    def test_not_read_only_beside_its_read_only_control(
        self, project: Project, line: str, control: str
    ) -> None:
        """A dangerous option, a write, a substitution, the background, an unsafe variable,
        a command off the list: not read-only — and the same line without it is (the
        control)."""
        assert project.read(control).read_only, project.read(control)
        assert not project.read(line).read_only, line

    @pytest.mark.parametrize(
        ("line", "cls", "control"),
        [
            # Network.
            ("curl https://x", Class.NETWORK, "cat x"),
            ("wget -q x", Class.NETWORK, "ls x"),
            ("ssh host ls", Class.NETWORK, "ls"),
            ("scp a host:", Class.NETWORK, "cp a b"),
            ("rsync -a . host:x", Class.NETWORK, "ls"),
            ("nc host 80", Class.NETWORK, "ls"),
            ("gh pr list", Class.NETWORK, "git log"),
            ("npx create-thing", Class.NETWORK, "npm test"),
            ("brew install x", Class.NETWORK, "ls"),
            ("apt-get install -y x", Class.NETWORK, "ls"),
            ("git push origin main", Class.NETWORK, "git log origin/main"),
            ("git pull", Class.NETWORK, "git status"),
            ("git fetch --all", Class.NETWORK, "git branch -a"),
            ("git clone u", Class.NETWORK, "git status"),
            ("git ls-remote o", Class.NETWORK, "git ls-files"),
            ("git submodule update", Class.NETWORK, "git status"),
            ("git -C .. push", Class.NETWORK, "git -C .. status"),
            ("npm install", Class.NETWORK, "npm test"),
            ("npm i left-pad", Class.NETWORK, "npm run build"),
            ("npm ci", Class.NETWORK, "npm run lint"),
            ("npm publish", Class.NETWORK, "npm pack"),
            ("pnpm add x", Class.NETWORK, "pnpm test"),
            ("yarn", Class.NETWORK, "yarn test"),
            ("yarn add x", Class.NETWORK, "yarn build"),
            ("pip install requests", Class.NETWORK, "pip list"),
            ("python3 -m pip install x", Class.NETWORK, "python3 -m pytest"),
            ("uv add x", Class.NETWORK, "uv run pytest"),
            ("uv sync", Class.NETWORK, "uv run x"),
            ("uv pip install x", Class.NETWORK, "uv run x"),
            ("uv tool install x", Class.NETWORK, "uv run x"),
            ("cargo install ripgrep", Class.NETWORK, "cargo build"),
            ("cargo add serde", Class.NETWORK, "cargo test"),
            ("cargo update", Class.NETWORK, "cargo check"),
            ("cargo fetch", Class.NETWORK, "cargo fmt"),
            ("go get x", Class.NETWORK, "go build ./..."),
            ("go install x@latest", Class.NETWORK, "go test ./..."),
            ("gem install x", Class.NETWORK, "gem list"),
            ("docker pull x", Class.NETWORK, "docker ps"),
            ("docker login", Class.NETWORK, "docker images"),
            ("timeout 5 curl x", Class.NETWORK, "timeout 5 cat x"),
            ("npm --prefix x install", Class.NETWORK, "npm --prefix x test"),
            ("pip3.12 install x", Class.NETWORK, "pip3.12 list"),
            ("yarn --frozen-lockfile", Class.NETWORK, "yarn test"),
            ("echo $(curl x)", Class.NETWORK, "echo $(cat x)"),
            ("cat <(curl x)", Class.NETWORK, "cat x"),
            ("bash -c 'curl x'", Class.NETWORK, "bash -c 'cat x'"),
            ("/usr/bin/curl x", Class.NETWORK, "/bin/cat x"),
            ("cat < /dev/tcp/host/80", Class.NETWORK, "cat < a.py"),
            ("echo x > /dev/udp/host/53", Class.NETWORK, "echo x > /dev/null"),
            # Recursive delete.
            ("rm -r build", Class.RECURSIVE_DELETE, "rm build"),
            ("rm -rf build", Class.RECURSIVE_DELETE, "rm -f build"),
            ("rm -fr build", Class.RECURSIVE_DELETE, "rm -fi build"),
            ("rm -R build", Class.RECURSIVE_DELETE, "rm -v build"),
            ("rm --recursive build", Class.RECURSIVE_DELETE, "rm --force build"),
            ("rm --rec build", Class.RECURSIVE_DELETE, "rm --verbose build"),
            ("rm -v -r build", Class.RECURSIVE_DELETE, "rm -v -- -r"),
            ("r''m -rf build", Class.RECURSIVE_DELETE, "r''m build"),
            ('"rm" -rf build', Class.RECURSIVE_DELETE, '"rm" build'),
            ("$'\\x72m' -rf build", Class.RECURSIVE_DELETE, "$'\\x72m' build"),
            ("cd .. && rm -r x", Class.RECURSIVE_DELETE, "cd .. && rm x"),
            ("ls | xargs rm -rf", Class.RECURSIVE_DELETE, "ls | xargs cat"),
            ("find . -exec rm -rf {} +", Class.RECURSIVE_DELETE, "find . -exec cat {} +"),
            ("bash -c 'rm -r build'", Class.RECURSIVE_DELETE, "bash -c 'rm build'"),
            ("sudo rm -rf build", Class.RECURSIVE_DELETE, "rm build"),
            ("rm < x -rf build", Class.RECURSIVE_DELETE, "rm < x build"),
            ("rm <<EOF -rf build\nEOF", Class.RECURSIVE_DELETE, "rm <<EOF build\nEOF"),
            # A download run by a shell.
            ("curl x | sh", Class.PIPE_TO_SHELL, "curl x | cat"),
            ("curl -fsSL x | bash -s --", Class.PIPE_TO_SHELL, "curl -fsSL x | less"),
            ("wget -qO- x | python3", Class.PIPE_TO_SHELL, "wget -qO- x | wc -c"),
            ("curl x | tee f | sh", Class.PIPE_TO_SHELL, "curl x | tee f | wc"),
            ("curl x | sudo bash", Class.PIPE_TO_SHELL, "curl x | sudo tee f"),
            ("echo $(curl x | sh)", Class.PIPE_TO_SHELL, "echo $(curl x | wc)"),
            ("bash -c 'curl x | sh'", Class.PIPE_TO_SHELL, "bash -c 'curl x | wc'"),
            ("bash <(curl x)", Class.PIPE_TO_SHELL, "cat <(curl x)"),
            ('sh -c "$(curl x)"', Class.PIPE_TO_SHELL, 'echo "$(curl x)"'),
            ('eval "$(wget -O- x)"', Class.PIPE_TO_SHELL, 'echo "$(wget -O- x)"'),
            # Another user's rights.
            ("sudo ls", Class.PRIVILEGE, "ls"),
            ("su -c ls", Class.PRIVILEGE, "ls"),
            ("doas ls", Class.PRIVILEGE, "ls"),
            ("echo $(sudo id)", Class.PRIVILEGE, "echo $(id)"),
            ("timeout 5 sudo ls", Class.PRIVILEGE, "timeout 5 ls"),
        ],
    )
    def test_must_ask_classes_beside_their_controls(
        self, project: Project, line: str, cls: Class, control: str
    ) -> None:
        """Each must-ask class is found however the command is spelled, wrapped, nested or
        piped, with a reason in words — and the same line without the dangerous part is not
        in that class (the control)."""
        reading = project.read(line)
        assert cls in reading.classes, (line, reading.classes)
        assert reading.must_ask, line
        assert not reading.read_only
        assert cls not in project.read(control).classes, control

    @pytest.mark.parametrize(
        ("line", "control"),
        [
            ("ls > ~/x", "ls > x"),
            ("ls > $HOME/x", "ls > ./x"),
            ("ls > ../../x", "ls > ../x"),
            ("ls > /tmp/x", "ls > /dev/null"),
            ("ls 2>> /etc/x", "ls 2>> x"),
            ("echo > out/x", "echo > in/x"),
            ("cd .. && cd .. && touch x", "cd .. && touch x"),
            ("cd /tmp && touch x", "cd . && touch x"),
            ("cd && touch x", "cd sub2 && touch x"),
            ("cd $D && touch x", "cd d && touch x"),
            ("cd - && touch x", "cd ./d && touch x"),
            ("cp a.py /tmp/", "cp a.py b.py"),
            ("cp /etc/hosts .", "cp a.py ."),
            ("cp -t /tmp a.py", "cp -t . a.py"),
            ("cp --target-directory=/tmp a.py", "cp --target-directory=d a.py"),
            ("mv a.py ../../", "mv a.py ../"),
            ("ln -s a.py ~/link", "ln -s a.py link"),
            ("touch out/x", "touch in/x"),
            ("touch out/../x", "touch in/../x"),
            ("cd out && touch ../x", "cd in && touch ../x"),
            ("mkdir -p /tmp/x", "mkdir -p x"),
            ("mkdir -m 700 ~/x", "mkdir -m 700 x"),
            ("rm /etc/hosts", "rm a.py"),
            ("rm $F", "rm a.py"),
            ("rm ../../*", "rm ../*"),
            ("rm out/*", "rm in/*"),
            ("rm {a,b}.py", "rm a.py b.py"),
            ("rmdir /tmp/x", "rmdir x"),
            ("chmod 755 /usr/bin/x", "chmod 755 a.py"),
            ("chmod -R 777 /", "chmod -R 755 ."),
            ("chown u:g ~/x", "chown u:g x"),
            ("install -m 755 a.py /usr/bin/", "install -m 755 a.py bin/"),
            ("truncate -s 0 /var/log/x", "truncate -s 0 x"),
            ("sed -i s/a/b/ /etc/hosts", "sed -i s/a/b/ a.py"),
            ("sed -i.bak -e s/a/b/ ~/.bashrc", "sed -i.bak -e s/a/b/ a.py"),
            ("cat a.py | tee /tmp/x", "cat a.py | tee x"),
            ("cat a.py | tee -a ~/.bashrc", "cat a.py | tee -a .bashrc"),
            ("sort -o ~/x a.py", "sort -o x a.py"),
            ("sort -no /tmp/x a.py", "sort -no x a.py"),
            ("sort --output /tmp/x a.py", "sort --output=x a.py"),
            ("tree -o /tmp/x", "tree -o x"),
            ("uniq a.py /tmp/b", "uniq a.py b"),
            ("ls | xargs rm", "ls | xargs cat"),
            ("find . -exec touch {} +", "find . -exec cat {} +"),
            ("bash -c 'touch /tmp/x'", "bash -c 'touch x'"),
            ("bash -c '' > /tmp/x", "bash -c '' > x"),
            ("bash -c 'cd /' > /tmp/x", "bash -c 'cd /' > x"),
            ("for d in a; do cd $d; touch x; done", "for d in a; do touch x; done"),
            ("env -C $X touch f", "env -C d touch f"),
            ("pushd +1 && touch f", "pushd d && touch f"),
        ],
    )
    def test_writes_outside_the_project_are_must_ask(
        self, project: Project, line: str, control: str
    ) -> None:
        """A write by redirection, tee, a path argument of cp mv ln touch mkdir rm rmdir
        chmod chown install truncate, or `sed -i` is resolved against the cwd and the `cd`s
        before it; outside the project, through a link pointing out, at `~`, `$VAR`, a glob
        or a brace the policy cannot know, or from an unknown cwd: must-ask. The same write
        inside is not (the control)."""
        reading = project.read(line)
        assert Class.WRITE_OUTSIDE in reading.classes, (line, reading)
        assert any("outside" in w or "cannot know" in w for w in reading.must_ask)
        assert Class.WRITE_OUTSIDE not in project.read(control).classes, control

    def test_no_project_means_every_write_is_outside(self, project: Project) -> None:
        """With no project, a write anywhere is outside one; a read-only line stays
        read-only (the control)."""
        assert Class.WRITE_OUTSIDE in read_shell("touch x", str(project.cwd), None).classes
        assert read_shell("ls", str(project.cwd), None).read_only

    @pytest.mark.parametrize(
        "line",
        [
            "ls; rm -rf ~",
            "echo $(curl x|sh)",
            "cat <(curl x)",
            "git -c core.pager=sh log",
            "find . -delete",
            "sed -i s/a/b/ f",
            "ls > ~/x",
            "cd .. && rm -r x",
            "bash -c 'curl x | sh'",
            "r''m -rf /",
            '"rm" -rf /',
            "ls\nrm -rf /",
            "ls # comment\nsudo id",
            "ls \\\n; curl x",
            "eval ls",
            "source ./env.sh",
            "f() { ls; }; f",
            "bash <<EOF\nls\nEOF",
            "echo ls | bash",
            "$CMD",
            'ls "unterminated',
            "xargs sh -c 'ls'",
            "find . -exec sh -c 'ls' ;",
        ],
    )
    def test_hostile_lines_are_never_read_only(self, project: Project, line: str) -> None:
        """The hostile examples: each is asked (not read-only), whatever the first command
        is; what cannot be read is UNREAD."""
        reading = project.read(line)
        assert not reading.read_only, line
        assert reading.classes - {Class.READ_ONLY}, line

    @pytest.mark.parametrize(
        ("line", "reason"),
        [
            ("curl x", "`curl` reaches the network"),
            ("git push", "`git push` reaches the network"),
            ("rm -rf build", "`rm -r` deletes a whole tree"),
            ("sudo ls", "`sudo` runs a command as another user"),
            ("curl x | sh", "`curl`'s download is piped into `sh`, which runs it"),
            ("ls > ~/x", "`>` writes `~/x`, a path wisp cannot know"),
        ],
    )
    def test_each_finding_says_why_in_words(self, project: Project, line: str, reason: str) -> None:
        """Every must-ask finding carries a reason a person reads."""
        assert reason in project.read(line).must_ask

    def test_a_write_through_a_link_names_where_it_leads(self, project: Project) -> None:
        """A write through a link pointing out names both the path and where it leads."""
        reading = project.read("touch out/x")
        spelled = f"`{project.cwd / 'out' / 'x'}` (through a link: `{project.outside / 'x'}`)"
        assert f"`touch` writes {spelled}, outside the project" in reading.must_ask

    def test_a_write_outside_names_the_resolved_path(self, project: Project) -> None:
        """The reason names the absolute path the write reaches, `cd`s applied."""
        reading = project.read("cd .. && cd .. && touch x")
        target = project.root.parent / "x"
        assert f"`touch` writes `{target}`, outside the project" in reading.must_ask
        assert reading.written == (str(target),)

    @pytest.mark.parametrize(
        ("line", "prefixes"),
        [
            ("npm test", (("npm", "test"),)),
            ("npm run build -- --watch", (("npm", "run"),)),
            ("make", (("make",),)),
            ("ls && make -j4 && pytest -q tests/", (("make", "-j4"), ("pytest", "-q"))),
            ("make; make", (("make",),)),
            ("echo hi > out.txt", (("echo", "hi"),)),
            ("echo $(pwd)", (("pwd",), ("echo",))),
            ("rm $F", (("rm",),)),
            ("X=1 make", (("make",),)),
            ("timeout 60 npm test", (("npm", "test"),)),
            ("ls | xargs grep x", (("xargs", "grep"),)),
            ("cat a.py", ()),
        ],
    )
    def test_prefixes_are_the_first_two_words_of_each_command_not_read_only(
        self, project: Project, line: str, prefixes: tuple[tuple[str, ...], ...]
    ) -> None:
        """The first two words of each simple command that is not read-only (one if it has
        one; cut before a word the parser cannot know), each once, read-only ones left out."""
        assert project.read(line).prefixes == prefixes

    def test_written_lists_every_path_written_absolute(self, project: Project) -> None:
        """Every path a line writes, resolved: redirections, tee, writing commands, `sed -i`,
        a glob's matches."""
        reading = project.read("ls > o1 && cat a.py | tee o2 && cp a.py o3 && sed -i s/x/y/ o4")
        cwd = project.cwd
        assert reading.written == (
            str(cwd / "o1"),
            str(cwd / "o2"),
            str(cwd / "a.py"),
            str(cwd / "o3"),
            str(cwd / "o4"),
        )
        globbed = project.read("rm *.py")
        assert sorted(globbed.written) == [str(cwd / "a.py"), str(cwd / "b.py")]

    def test_a_shell_write_into_a_protected_place_is_noted(self, project: Project) -> None:
        """A write into `.git/`, a harness's folder or a sensitive file inside the project is
        not must-ask but noted as protected (no wide grant may cover it); a write beside it
        is not (the control)."""
        reading = project.read("echo x > ../.git/hooks/pre-commit")
        assert reading.protected == (str(project.root / ".git" / "hooks" / "pre-commit"),)
        assert "`.git/` is a protected folder" in reading.notes[0]
        assert Class.OTHER in reading.classes
        assert project.read("echo x > ../hooks.txt").protected == ()
        assert project.read("cp a.py .env").protected == (str(project.cwd / ".env"),)

    def test_unread_lines_say_why(self, project: Project) -> None:
        """An unread line is UNREAD, with the parser's reason in its notes; not must-ask by
        itself."""
        reading = project.read("eval ls")
        assert Class.UNREAD in reading.classes
        assert reading.notes == ("wisp cannot read the whole line: `eval` runs text as commands",)
        assert reading.must_ask == ()

    @settings(max_examples=150)
    @given(st.text(max_size=40) | st.binary(max_size=40).map(_as_text) | shell_like)
    def test_never_raises_on_any_text(
        self, tmp_path_factory: pytest.TempPathFactory, line: str
    ) -> None:
        """Any text — bytes that are not UTF-8, NULs, paths the system cannot take — is
        read against a real project without an exception."""
        root = tmp_path_factory.getbasetemp()
        reading = read_shell(line, str(root), str(root))
        assert reading.line is not None and reading.line.text == line

    @settings(max_examples=300)
    @given(
        st.lists(
            st.sampled_from(
                [
                    *("ls ", "cat a ", "git log ", "echo x ", "sed -n 1p ", "find . "),
                    *("&& ", "|| ", "; ", "| ", "\n", "& ", "# c\n", "> /dev/null "),
                    *("$(", ")", "`", "<(", ">(", "(", "{ ", "}", "f() ", "((", "))"),
                    *("<<EOF\nx\nEOF\n", "<<< ", "'", '"', "\\", "$X ", "~ ", "*"),
                    *("if ", "then ", "fi ", "for i in 1; do ", "done ", "case ", "esac "),
                    *("eval ", "bash -c ", "x=1 ", "cd .. ", "! ", "[[ ", "]] ", "$((1))"),
                ]
            ),
            max_size=14,
        ).map("".join)
    )
    def test_a_line_with_any_unknown_node_is_never_read_only(self, line: str) -> None:
        """Whatever the line, if its tree holds a syntax error or a node the reader does not
        handle, it is not read-only: read-only lines are made of known constructs only."""
        reading = read_shell(line, "/p", "/p")
        tree = _PARSER.parse(line.encode("utf-8", "surrogatepass"))
        if reading.read_only:
            assert not tree.root_node.has_error, line
            kinds = _kinds(tree.root_node)
            assert kinds <= KNOWN_NODES, (line, kinds - KNOWN_NODES)


# The node types a fully read line may hold (grammar constructs read into commands, words and
# redirections); anything else is unread or at least not read-only.
KNOWN_NODES = frozenset(
    {
        "program", "list", "pipeline", "command", "command_name", "word", "number",
        "string", "string_content", "raw_string", "ansi_c_string", "concatenation",
        "simple_expansion", "expansion", "variable_name", "special_variable_name",
        "file_redirect", "file_descriptor", "heredoc_redirect", "heredoc_start",
        "heredoc_body", "heredoc_content", "heredoc_end", "herestring_redirect",
        "redirected_statement", "variable_assignment", "variable_assignments", "comment",
        "subshell", "compound_statement", "if_statement", "elif_clause", "else_clause",
        "for_statement", "while_statement", "do_group", "case_statement", "case_item",
        "negated_command", "test_command", "binary_expression", "unary_expression",
        "parenthesized_expression", "test_operator", "extglob_pattern", "regex",
        "brace_expression", "arithmetic_expansion", "command_substitution",
        "declaration_command", "unset_command", "translated_string", "array",
        "subscript", "ternary_expression", "postfix_expression",
    }
)  # fmt: skip
_PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def _kinds(node: tree_sitter.Node) -> set[str]:
    found = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if n.is_named:
            found.add(n.type)
        stack.extend(n.children)
    return found


class TestReadTool:
    def test_reads_network_and_other_tools(self, project: Project) -> None:
        """A reading tool is read-only, a fetching one is network (must-ask, with a reason),
        anything else is other."""
        cwd, root = str(project.cwd), str(project.root)
        assert read_tool(Effect.READ, ("/etc/passwd",), cwd, root).read_only
        fetch = read_tool(Effect.NETWORK, (), cwd, root)
        assert fetch.classes == {Class.NETWORK}
        assert fetch.must_ask == ("the tool reaches the network",)
        assert read_tool(Effect.OTHER, (), cwd, root).classes == {Class.OTHER}

    @pytest.mark.parametrize(
        "path",
        ["a.py", "new.py", "deep/new/file.py", "../README.md", "{root}/sub/a.py", "in/a.py"],
    )
    def test_an_edit_inside_the_project_is_edit_in_project(
        self, project: Project, path: str
    ) -> None:
        """An edit of a file inside the project tree (relative to the cwd, absolute, new,
        through a link that stays inside) is EDIT_IN_PROJECT, its path written."""
        spelled = path.format(root=project.root)
        reading = read_tool(Effect.EDIT, (spelled,), str(project.cwd), str(project.root))
        assert reading.classes == {Class.EDIT_IN_PROJECT}, reading
        assert reading.must_ask == ()
        assert len(reading.written) == 1

    @pytest.mark.parametrize(
        "path",
        [
            "../../x",
            "/etc/hosts",
            "~/x",
            "out/x",
            "out/../x",
            "{outside}/x",
            "{root}/../x",
            "{root}x/y",
        ],
    )
    def test_an_edit_outside_the_project_is_must_ask(self, project: Project, path: str) -> None:
        """An edit outside the tree — by `..`, absolute, `~`, through a link in the project
        pointing out (`out/../x` too: the system takes `..` from where the link leads), a
        sibling whose name starts with the project's — is WRITE_OUTSIDE."""
        spelled = path.format(root=project.root, outside=project.outside)
        reading = read_tool(Effect.EDIT, (spelled,), str(project.cwd), str(project.root))
        assert Class.WRITE_OUTSIDE in reading.classes, reading
        assert reading.must_ask
        assert set(reading.classes) & MUST_ASK

    @pytest.mark.parametrize(
        "path",
        [
            "../.git/config",
            "../.git/hooks/pre-commit",
            "../.claude/settings.json",
            "../.codex/config.toml",
            "../.gemini/settings.json",
            "../.opencode/plugin/x.js",
            "../.cursor/hooks.json",
            "../.github/copilot-instructions.md",
            "../.github/hooks/hooks.json",
            "../.vscode/tasks.json",
            "../.idea/workspace.xml",
            "../.envrc",
            "../.wisp/policy.toml",
            "../.env",
            "../.env.local",
            "deep/.env.production",
            "../.GIT/config",
            "../.git",
        ],
    )
    def test_an_edit_in_a_protected_place_is_asked(self, project: Project, path: str) -> None:
        """Inside the project but in `.git/`, a harness's or editor's folder, `.envrc`, the
        project's policy or a sensitive file: OTHER (asked), never EDIT_IN_PROJECT, its
        place noted — while a file beside it is in-project (the control)."""
        cwd, root = str(project.cwd), str(project.root)
        reading = read_tool(Effect.EDIT, (path,), cwd, root)
        assert reading.classes == {Class.OTHER}, reading
        assert reading.protected and reading.notes
        beside = read_tool(Effect.EDIT, ("../git-notes.md",), cwd, root)
        assert beside.classes == {Class.EDIT_IN_PROJECT}
        assert read_tool(Effect.EDIT, ("../.github/workflows/ci.yml",), cwd, root).classes == {
            Class.EDIT_IN_PROJECT
        }

    def test_sensitive_files_are_the_persons_to_name(self, project: Project) -> None:
        """The sensitive files default to `.env` and `.env.*`; a caller's own list replaces
        it (a path glob with `/` matches the path inside the project)."""
        cwd, root = str(project.cwd), str(project.root)
        mine = ("*.pem", "secrets/*")
        assert read_tool(Effect.EDIT, ("k.pem",), cwd, root, mine).classes == {Class.OTHER}
        assert read_tool(Effect.EDIT, ("../secrets/a",), cwd, root, mine).classes == {Class.OTHER}
        assert read_tool(Effect.EDIT, (".env",), cwd, root, mine).classes == {Class.EDIT_IN_PROJECT}

    def test_an_edit_with_no_known_file_or_no_project_is_outside(self, project: Project) -> None:
        """An edit whose file is not known, or made with no project, is WRITE_OUTSIDE."""
        cwd = str(project.cwd)
        assert read_tool(Effect.EDIT, (), cwd, str(project.root)).classes == {Class.WRITE_OUTSIDE}
        assert read_tool(Effect.EDIT, ("a.py",), cwd, None).classes == {Class.WRITE_OUTSIDE}

    def test_one_path_outside_among_several_makes_it_must_ask(self, project: Project) -> None:
        """A multi-file edit is must-ask when any of its files is outside."""
        reading = read_tool(Effect.EDIT, ("a.py", "/etc/x"), str(project.cwd), str(project.root))
        assert reading.classes == {Class.EDIT_IN_PROJECT, Class.WRITE_OUTSIDE}


class TestInside:
    def test_inside_needs_both_the_spelling_and_the_real_path(self, project: Project) -> None:
        """A path is inside only when its lexical form and its real path both are: a link in
        the project pointing out is outside; the project itself is inside."""
        root = str(project.root)
        assert inside(str(project.cwd / "a.py"), root)
        assert inside(root, root)
        assert not inside(str(project.cwd / "out" / "x"), root)
        assert not inside(str(project.outside), root)
        assert not inside(root + "x", root)
        assert not inside(str(project.cwd / "a.py"), None)


class TestProtected:
    def test_protected_places_say_why(self, project: Project) -> None:
        """`protected` gives a reason for a protected place and None for an ordinary file,
        through a link into a protected folder too."""
        root = str(project.root)
        assert protected(str(project.root / ".git" / "config"), root) == (
            "`.git/` is a protected folder"
        )
        assert protected(str(project.root / ".env"), root) == "`.env` is a sensitive file"
        assert protected(str(project.cwd / "a.py"), root) is None
        (project.cwd / "hooks").symlink_to(project.root / ".git")
        assert protected(str(project.cwd / "hooks" / "x"), root) is not None


class TestSedScriptReadsOnly:
    def test_scripts_are_checked_joined_as_sed_runs_them(self, project: Project) -> None:
        """`-e` scripts are joined with newlines before they run: `a\\` then `w x` is text
        appended, not a write; `1{` then `w x` is a write."""
        assert project.read("sed -n -e '1a\\' -e 'w x' a.py").read_only
        assert not project.read("sed -n -e '1{' -e 'w x' -e '}' a.py").read_only

    @pytest.mark.parametrize(
        "script",
        ["p", "1,20p", "/x/p", "/a/,/b/{p;q}", "$p", "5q", "s/a/b/gp", "s|a|b|2p", "y/ab/cd/",
         "\\%x%p", "/x/!p", "=", "1~2p", "/x/I p", "b end; :end", "/def /,/^$/p", "r f"],
    )  # fmt: skip
    def test_printing_scripts_read_only(self, script: str) -> None:
        """Addresses, printing, quitting, substitutions without `w`/`e`, labels and
        reading a file only read."""
        assert sed_script_reads_only(script)

    @pytest.mark.parametrize(
        "script",
        ["w out", "1w out", "W out", "s/a/b/w out", "s/a/b/e", "e id", "1e id", "s/a/b/gw x",
         "/x/{w out\n}", "s/a", "v", "s\\a\\b\\"],
    )  # fmt: skip
    def test_writing_or_running_scripts_do_not(self, script: str) -> None:
        """`w`, `W`, `e`, an `s` with the `w` or `e` flag, a broken or unknown script: not
        read-only."""
        assert not sed_script_reads_only(script)
