"""wisp: the application built on the pending channel (CLI, and the faces to come)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("wisp-pending")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"
