"""Opening the channel: created private, and refused when it cannot be trusted; reading its
files whole, within the cap."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from pending import Channel, ChannelUnavailable, ChannelUnsafe, channel_empty
from pending._fsio import MAX_RECORD_BYTES, Unreadable, read_fd

as_root = pytest.mark.skipif(os.getuid() != 0, reason="chown to another uid needs root")
OTHER_UID = 4321


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


class TestCreate:
    def test_created_0700_with_staging(self, home: Path) -> None:
        """WISP_HOME, pending/, .tmp/ and .servers/ are created 0700, whatever the umask."""
        old = os.umask(0)
        try:
            Channel.open(home).close()
        finally:
            os.umask(old)
        for path in (home, home / "pending", home / "pending/.tmp", home / "pending/.servers"):
            assert mode(path) == 0o700, path

    def test_the_application_opens_wisp_home(self, home: Path) -> None:
        """The channel library takes a directory; wisp chooses `$WISP_HOME/pending`."""
        from wisp import open_channel

        with open_channel() as channel:
            assert channel.path == home / "pending"

    def test_files_are_0600(self, channel: Channel, server: object) -> None:
        """Published files are 0600 even under a permissive umask."""
        from helpers import command

        old = os.umask(0)
        try:
            req = command(server)  # type: ignore[arg-type]
            channel.file(req)
        finally:
            os.umask(old)
        assert mode(channel.path / f"{req.id}.request.json") == 0o600


class TestRefuse:
    @pytest.mark.parametrize("which", ["home", "pending"])
    def test_symlink(self, tmp_path: Path, which: str) -> None:
        """A symlinked WISP_HOME or pending/ is refused, naming the fix."""
        real = tmp_path / "real"
        real.mkdir(mode=0o700)
        home = tmp_path / "home"
        if which == "home":
            home.symlink_to(real)
            bad = home
        else:
            home.mkdir(mode=0o700)
            (home / "pending").symlink_to(real)
            bad = home / "pending"
        with pytest.raises(ChannelUnsafe) as info:
            Channel.open(home)
        assert str(bad) in str(info.value)
        assert "symbolic link" in str(info.value)
        assert f"rm {bad} && mkdir -m 700 {bad}" in str(info.value)

    @pytest.mark.parametrize("bits", [0o770, 0o707, 0o722, 0o777])
    def test_group_or_world_writable(self, home: Path, bits: int) -> None:
        """A group- or world-writable pending/ is refused with the chmod that fixes it."""
        Channel.open(home).close()
        os.chmod(home / "pending", bits)
        with pytest.raises(ChannelUnsafe) as info:
            Channel.open(home)
        assert f"chmod 700 {home / 'pending'}" in str(info.value)
        assert f"{bits:04o}" in str(info.value)

    @as_root
    def test_owned_by_another_uid(self, home: Path) -> None:
        """A pending/ owned by another uid is refused with what root would do: run as its
        owner (never `chown 0`, root taking a user's directory)."""
        Channel.open(home).close()
        os.chown(home / "pending", OTHER_UID, -1)
        with pytest.raises(ChannelUnsafe) as info:
            Channel.open(home)
        assert f"owned by uid {OTHER_UID}" in str(info.value)
        assert f"sudo -u '#{OTHER_UID}'" in str(info.value)
        assert "chown 0" not in str(info.value)

    def test_not_a_directory(self, home: Path) -> None:
        """A file where pending/ should be is refused, not overwritten."""
        home.mkdir(mode=0o700)
        (home / "pending").write_text("hello")
        with pytest.raises(ChannelUnsafe, match="not a directory"):
            Channel.open(home)
        assert (home / "pending").read_text() == "hello"

    def test_cannot_create(self, tmp_path: Path) -> None:
        """A WISP_HOME that cannot be created is a clear error, not a traceback."""
        if os.getuid() == 0:
            target = Path("/proc/wisp-cannot-exist")
        else:
            locked = tmp_path / "locked"
            locked.mkdir(mode=0o500)
            target = locked / "home"
        with pytest.raises(ChannelUnavailable, match="WISP_HOME"):
            Channel.open(target)


class TestWhatARefusalTellsToDo:
    """A refusal names the path at fault and a fix that fits it: the missing directories and
    the `mkdir -p` that makes them; `mv … .bak` only for a path that is wisp's own."""

    def test_a_home_whose_parent_is_missing(self, tmp_path: Path) -> None:
        """Control: a home whose parent is there is made. One whose parent is missing names
        the highest missing directory and `mkdir -p` of the parent (wisp makes the last
        part itself), not errno's "No such file or directory"."""
        Channel.open(tmp_path / "made").close()
        for target, missing in (
            (tmp_path / "absent" / "home", tmp_path / "absent"),
            (tmp_path / "gone" / "deeper" / "home", tmp_path / "gone"),
        ):
            with pytest.raises(ChannelUnavailable) as info:
                Channel.open(target)
            said = str(info.value)
            assert f"{missing} does not exist" in said, said
            assert f"`mkdir -p {target.parent}`" in said and "wisp makes home itself" in said
            assert "No such file" not in said
            assert not missing.exists()

    def test_a_home_named_on_a_file_is_not_to_be_moved(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """`WISP_HOME=/etc/passwd`: a path the person named, not wisp's: no `mv` of it is
        suggested, only another WISP_HOME. The controls: wisp's default `~/.wisp`, and a
        directory wisp keeps in its home, as files: moving them aside is the fix."""
        named = tmp_path / "passwd"
        named.write_text("root:x:0:0")
        with pytest.raises(ChannelUnsafe) as info:
            Channel.open(named)
        assert "mv " not in str(info.value) and "set WISP_HOME" in str(info.value)
        monkeypatch.setenv("HOME", str(tmp_path))
        (tmp_path / ".wisp").write_text("")
        with pytest.raises(ChannelUnsafe) as info:
            Channel.open(tmp_path / ".wisp")
        assert f"mv {tmp_path / '.wisp'} {tmp_path / '.wisp'}.bak" in str(info.value)
        home = tmp_path / "home"
        home.mkdir(mode=0o700)
        (home / "pending").write_text("")
        with pytest.raises(ChannelUnsafe) as info:
            Channel.open(home)
        assert f"mv {home / 'pending'} {home / 'pending'}.bak" in str(info.value)


class TestEmpty:
    """`channel_empty`: true only where a listing would find nothing and a sweep do nothing,
    and only where opening the channel would not refuse it; it makes nothing."""

    def test_a_channel_just_made_is_empty(self, home: Path) -> None:
        """The three directories as Channel.open makes them, with nothing in them."""
        Channel.open(home).close()
        assert channel_empty(home)

    @pytest.mark.parametrize("missing", ["home", "pending", "pending/.tmp", "pending/.servers"])
    def test_a_missing_directory_is_not_empty_and_is_not_made(
        self, home: Path, missing: str
    ) -> None:
        """Missing (never made yet, or removed): not known to be empty, and left missing;
        opening the channel makes it."""
        Channel.open(home).close()
        gone = home if missing == "home" else home / missing
        for name in ("pending/.tmp", "pending/.servers", "pending", ""):
            if (home / name).is_relative_to(gone):
                (home / name).rmdir()
        assert not channel_empty(home)
        assert not gone.exists()

    @pytest.mark.parametrize(
        "entry", ["abc.request.json", ".tmp/abc.tmp", ".servers/0123456789abcdef.lock", "junk"]
    )
    def test_anything_in_it_is_not_empty(self, channel: Channel, entry: str) -> None:
        """A request, a writer's temp, a server's lock, or anything else a sweep would look
        at: not empty."""
        (channel.path / entry).write_text("{}")
        assert not channel_empty(channel.home)

    def test_a_request_filed_is_not_empty(self, channel: Channel) -> None:
        """A request filed by a live asker (its lock and its request file)."""
        from helpers import command

        with channel.server() as server:
            channel.file(command(server))
            assert not channel_empty(channel.home)

    def test_out_of_descriptors_it_makes_nothing(self, home: Path) -> None:
        """With one descriptor left (the home opens, pending/ cannot: EMFILE before the
        missing name), nothing is made either: only a missing directory was ever to be made,
        and never by this."""
        home.mkdir(mode=0o700)
        script = (
            "import os, resource, sys\n"
            "from pending import channel_empty\n"
            "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
            "resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))\n"
            "fds = []\n"
            "try:\n"
            "    while True:\n"
            "        fds.append(os.open('/dev/null', os.O_RDONLY))\n"
            "except OSError:\n"
            "    pass\n"
            "os.close(fds.pop())\n"
            "print(channel_empty(sys.argv[1]))\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", script, str(home)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert (done.returncode, done.stdout, done.stderr) == (0, "False\n", "")
        assert list(home.iterdir()) == []

    @pytest.mark.parametrize("which", ["home", "pending", "pending/.tmp", "pending/.servers"])
    def test_an_unsafe_directory_is_not_empty(self, home: Path, which: str) -> None:
        """Group-writable or a symlink, where Channel.open refuses: not empty (the listing
        then opens the channel, which refuses it)."""
        Channel.open(home).close()
        path = home if which == "home" else home / which
        os.chmod(path, 0o770)
        assert not channel_empty(home)
        os.chmod(path, 0o700)
        real = home.parent / "real"
        path.rename(real)
        path.symlink_to(real)
        assert not channel_empty(home)


class TestReading:
    @pytest.mark.parametrize("size", [0, 1, 4096, 65536, 65537, 70000])
    def test_a_file_is_read_whole_or_refused_over_the_cap(self, tmp_path: Path, size: int) -> None:
        """read_fd gives a file's every byte up to the cap (64 KiB) and refuses one over it,
        whatever its size against the size of one read."""
        path = tmp_path / "record.json"
        data = bytes(i % 251 for i in range(size))
        path.write_bytes(data)
        fd = os.open(path, os.O_RDONLY)
        try:
            if size <= MAX_RECORD_BYTES:
                assert read_fd(fd) == data
            else:
                with pytest.raises(Unreadable, match="cap"):
                    read_fd(fd)
        finally:
            os.close(fd)
