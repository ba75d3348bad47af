"""The version, in one place: pyproject.toml reads it from here (no metadata scan at run time)."""

__version__ = "0.1.0"
