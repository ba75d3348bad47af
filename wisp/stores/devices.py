"""The devices paired with `wisp web`: which browsers may see and answer what waits.

`web-devices.json` holds each paired device's name, when it was paired, and the SHA-256 of its
credential (which the device's page keeps and sends with each request); the credential
itself is never stored, so a copy of the file answers nothing. `web-pairing.json` holds the
pairing codes `wisp web pair` made, hashed too: each pairs one device, within
:data:`PAIR_TTL_S` of being made. Both are written whole and atomically under the home's
lock, 0600 (:mod:`wisp.stores.jsonstore`). Pairing and revoking are audited (`web.paired`,
`web.revoked`), with the device's name.

A credential and a code are 256 random bits: a fast hash is all a stored one needs (nothing
can be guessed back from it), and a lookup compares every stored digest in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import attrs

from pending import SYSTEM_CLOCK, Clock, format_time, parse_time, record_time
from wisp._errors import WispError
from wisp.audit.writer import AuditEvent, EntryPoint, audit
from wisp.stores.jsonstore import JsonStore, StoreError

DEVICES_FILE = "web-devices.json"
PAIRING_FILE = "web-pairing.json"
PAIR_TTL_S = 300  # a pairing link is good for five minutes, and for one device
MAX_DEVICES = 32
MAX_PAIRINGS = 8  # links made and not yet used; older ones are dropped first
DEVICES_MAX_BYTES = 64 * 1024
# A device's name: what `wisp web devices` lists and `wisp web revoke NAME` takes.
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,31}")
NAME_RULE = "1 to 32 letters, digits, dots, dashes or underscores, starting with a letter or digit"
_SECRET_BYTES = 32


class PairingRefused(WispError):
    """A pairing that cannot be made: the message says why and what to do. Nothing was
    written."""


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def valid_name(name: str) -> bool:
    return NAME_PATTERN.fullmatch(name) is not None


@attrs.frozen(kw_only=True)
class Device:
    name: str
    paired_at: datetime
    digest: str  # the SHA-256 of its credential

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "pairedAt": format_time(self.paired_at), "digest": self.digest}

    @classmethod
    def from_json(cls, data: Any) -> Device:
        name, digest_ = data["name"], data["digest"]
        if not isinstance(name, str) or not valid_name(name) or not isinstance(digest_, str):
            raise ValueError(f"a device with a bad name or digest: {name!r}")
        return cls(name=name, paired_at=parse_time(data["pairedAt"]), digest=digest_)


@attrs.frozen(kw_only=True)
class Pairing:
    digest: str  # the SHA-256 of the code in the link
    expires_at: datetime

    def to_json(self) -> dict[str, Any]:
        return {"digest": self.digest, "expiresAt": format_time(self.expires_at)}

    @classmethod
    def from_json(cls, data: Any) -> Pairing:
        if not isinstance(data["digest"], str):
            raise ValueError("a pairing with a bad digest")
        return cls(digest=data["digest"], expires_at=parse_time(data["expiresAt"]))


def _matching(devices: list[Device], credential: str | None) -> Device | None:
    """The device of *credential* among *devices*, each compared in constant time."""
    if not credential or len(credential) > 128:
        return None
    wanted = digest(credential)
    found = None
    for device in devices:
        if hmac.compare_digest(device.digest, wanted):
            found = device
    return found


class DeviceStore:
    """The paired devices and the pairing codes not yet used, in *home*."""

    def __init__(self, home: Path, *, clock: Clock = SYSTEM_CLOCK) -> None:
        self.home = home
        self.clock = clock
        self._devices: JsonStore[Device] = JsonStore(
            home,
            DEVICES_FILE,
            "devices",
            load=Device.from_json,
            dump=Device.to_json,
            cap_bytes=DEVICES_MAX_BYTES,
            when_full="Revoke a device you no longer use (`wisp web devices`, then "
            "`wisp web revoke NAME`).",
        )
        self._pairings: JsonStore[Pairing] = JsonStore(
            home,
            PAIRING_FILE,
            "pairings",
            load=Pairing.from_json,
            dump=Pairing.to_json,
            cap_bytes=DEVICES_MAX_BYTES,
            when_full=f"Remove {home / PAIRING_FILE}: it holds only pairing links.",
        )

    # --- reading -----------------------------------------------------------------------

    def devices(self) -> list[Device]:
        """The paired devices, oldest first (raises :class:`StoreError`)."""
        return self._devices.items()

    def find(self, credential: str | None) -> Device | None:
        """The device whose credential this is, or None (read anew each time: a revoked
        device is refused from the next request on)."""
        return _matching(self.devices(), credential)

    @contextmanager
    def holding(self, credential: str | None) -> Iterator[Device | None]:
        """The device whose credential this is (or None), with the devices' lock held until
        the block ends: a revoke waits for an answer given inside it, and an answer given
        after a revoke returned finds no device."""
        with self._devices.locked() as home_fd:
            yield _matching(self._devices.read(home_fd), credential)

    # --- changing ----------------------------------------------------------------------

    def new_pairing(self) -> tuple[str, datetime]:
        """A pairing code, good for one device until the time returned."""
        import secrets

        code = secrets.token_urlsafe(_SECRET_BYTES)
        now = self.clock.now()
        expires = now + timedelta(seconds=PAIR_TTL_S)
        with self._pairings.locked() as home_fd:
            kept = [p for p in self._pairings.read(home_fd) if p.expires_at > now]
            kept = [*kept, Pairing(digest=digest(code), expires_at=expires)][-MAX_PAIRINGS:]
            self._pairings.write(home_fd, kept)
        return code, expires

    def pair(self, code: str, name: str) -> tuple[Device, str]:
        """Use pairing *code* for a device called *name*: the device, and its credential
        (handed to its page once). Raises :class:`PairingRefused` (nothing written) for a
        name that is bad or taken, and for a code that is unknown, used or past its time."""
        import secrets

        if not valid_name(name):
            raise PairingRefused(f"a device's name takes {NAME_RULE}; {name[:40]!r} does not.")
        now = record_time(self.clock)
        wanted = digest(code) if len(code) <= 128 else ""
        # The devices' lock, then the pairings': the one order every change takes them in.
        with self._devices.locked() as home_fd, self._pairings.locked():
            devices = self._devices.read(home_fd)
            if any(d.name == name for d in devices):
                raise PairingRefused(
                    f"a device is already called {name!r}: choose another name (or revoke "
                    f"that one first: `wisp web revoke {name}`)."
                )
            if len(devices) >= MAX_DEVICES:
                raise PairingRefused(
                    f"{MAX_DEVICES} devices are paired already: revoke one you no longer use "
                    "(`wisp web devices`, `wisp web revoke NAME`)."
                )
            pairings = self._pairings.read(home_fd)
            match = next(
                (p for p in pairings if hmac.compare_digest(p.digest, wanted)),
                None,
            )
            if match is None or match.expires_at <= now:
                raise PairingRefused(
                    "this pairing link is unknown, used, or more than "
                    f"{PAIR_TTL_S // 60} minutes old: run `wisp web pair` in your terminal "
                    "again and open the new link."
                )
            credential = secrets.token_urlsafe(_SECRET_BYTES)
            device = Device(name=name, paired_at=now, digest=digest(credential))
            self._pairings.write(
                home_fd, [p for p in pairings if p is not match and p.expires_at > now]
            )
            self._devices.write(home_fd, [*devices, device])
        audit(self.home, AuditEvent.WEB_PAIRED, {"device": name}, entry_point=EntryPoint.WEB)
        return device, credential

    def revoke(self, name: str) -> Device | None:
        """End device *name* at once; None if no device is called so."""
        with self._devices.locked() as home_fd:
            devices = self._devices.read(home_fd)
            found = next((d for d in devices if d.name == name), None)
            if found is None:
                return None
            self._devices.write(home_fd, [d for d in devices if d is not found])
        audit(self.home, AuditEvent.WEB_REVOKED, {"device": name}, entry_point=EntryPoint.WEB)
        return found


__all__ = [
    "DEVICES_FILE",
    "PAIRING_FILE",
    "PAIR_TTL_S",
    "Device",
    "DeviceStore",
    "PairingRefused",
    "StoreError",
]
