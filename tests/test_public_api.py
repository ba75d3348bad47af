"""The public facade of `pending` is small, sorted and complete."""

from __future__ import annotations

import pending


class TestFacade:
    def test_all_is_sorted(self) -> None:
        """`__all__` is kept sorted (constants, then classes, then functions, by ruff's order)."""
        assert pending.__all__ == sorted(
            pending.__all__, key=lambda n: (not n.isupper(), n[0].islower(), n)
        )

    def test_all_names_exist_and_are_public(self) -> None:
        """Every exported name resolves, and none is private."""
        for name in pending.__all__:
            assert not name.startswith("_")
            assert getattr(pending, name) is not None

    def test_everything_public_is_exported(self) -> None:
        """No public name is importable from `pending` without being in `__all__`: those it
        defines and those it loads on first use (its names table), whichever other tests in
        this process have loaded so far (which depends on the order the tests ran in)."""
        defined = {
            name
            for name, value in vars(pending).items()
            if not name.startswith("_") and not isinstance(value, type(pending))
        }
        importable = defined | set(pending._HOMES)
        assert importable - {"annotations"} == set(pending.__all__)

    def test_channel_package_knows_nothing_of_the_application(self) -> None:
        """`pending/` imports neither `wisp` nor the CLI libraries."""
        import subprocess
        import sys

        code = (
            "import sys, pending, pending.testing;"
            "bad = [m for m in ('wisp', 'typer', 'rich', 'click') if m in sys.modules];"
            "print(','.join(bad))"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == ""


class TestWispFacade:
    def test_all_is_sorted_and_complete(self) -> None:
        """`wisp.__all__` is sorted (constants, then classes, then functions, by ruff's order,
        as pending's) and names exactly its public, non-module attributes."""
        import wisp

        names = [n for n in wisp.__all__ if n != "__version__"]
        assert names == sorted(names, key=lambda n: (not n.isupper(), n[0].islower(), n))
        for name in wisp.__all__:  # each loads on first use
            assert getattr(wisp, name) is not None
        public = {
            name
            for name, value in vars(wisp).items()
            if not name.startswith("_") and not isinstance(value, type(wisp))
        }
        assert public == set(names)
        assert set(dir(wisp)) >= set(wisp.__all__)
