"""`wisp web`: serve the phone page; `wisp web pair|devices|revoke`: the devices it serves.

The face itself (Starlette, uvicorn) is imported by `wisp web` alone, inside its function:
every other command stays as light as it was. Pairing grants the power to answer, so it is
taken only from a terminal, as an answer is.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from wisp.cli._common import (
    command_group,
    config_or_fail,
    fail,
    print_json,
    refuse,
    require_terminal,
    say,
    tell,
    typed_as,
)
from wisp.cli._exit import ExitCode

web_app = command_group(
    "A page for your phone that shows what waits and answers it (paired devices only).",
    epilog="""Examples:
  wisp web                           serve on http://127.0.0.1:8765/
  wisp web pair                      a one-time link and QR code for your phone
  wisp web --listen 100.64.0.7:8765 --tls-cert c.pem --tls-key k.pem
  wisp web --host build1 --host alice@laptop   (their requests too, over ssh)
  wisp web devices
  wisp web revoke phone""",
)


def _listen(text: str) -> str:
    """--listen's text, once it reads as ADDR:PORT (a usage error, exit 2, if not)."""
    from wisp.web import parse_listen

    parse_listen(text)
    return text


@web_app.callback(invoke_without_command=True)
def web(
    ctx: typer.Context,
    listen: Annotated[
        str | None,
        typer.Option(
            "--listen",
            metavar="ADDR:PORT",
            parser=typed_as(_listen),
            help="Where to listen (default 127.0.0.1:8765). Another address than loopback "
            "is warned about unless --tls-cert and --tls-key are given.",
        ),
    ] = None,
    tls_cert: Annotated[
        str | None,
        typer.Option("--tls-cert", metavar="FILE", help="A PEM certificate: serve HTTPS."),
    ] = None,
    tls_key: Annotated[
        str | None,
        typer.Option("--tls-key", metavar="FILE", help="The certificate's PEM private key."),
    ] = None,
    machines: Annotated[
        list[str] | None,
        typer.Option(
            "--host",
            metavar="HOST",
            help="Also show and answer HOST's requests, through `ssh HOST wisp relay` "
            "(repeatable), as `wisp tui --host` does.",
        ),
    ] = None,
    relay_command: Annotated[
        str | None,
        typer.Option(
            "--relay-command",
            metavar="COMMAND",
            help="The command that starts a --host's relay, run without a shell; {host} is "
            "replaced by the host. Default: "
            "ssh -tt -o BatchMode=yes -- {host} wisp relay --via web.",
        ),
    ] = None,
) -> None:
    """Serve the page that shows what waits and answers it, to paired devices only
    (`wisp docs web`). Runs until Ctrl-C: exit 0; 2 if it cannot start."""
    if ctx.invoked_subcommand is not None:
        return
    from wisp import wisp_home
    from wisp.web import DEFAULT_HOST, DEFAULT_PORT, WebError, is_loopback, parse_listen
    from wisp.web._server import serve

    if (tls_cert is None) != (tls_key is None):
        fail("--tls-cert and --tls-key go together: give both, or neither.")
    host, port = parse_listen(listen) if listen else (DEFAULT_HOST, DEFAULT_PORT)
    tls = (tls_cert, tls_key) if tls_cert is not None and tls_key is not None else None
    if tls is None and not is_loopback(host):
        tell(
            f"wisp web: warning: listening on {host} without TLS: anyone on that network can "
            "read the requests and your device's credential in transit. Give --tls-cert and "
            "--tls-key, or listen on 127.0.0.1 behind `tailscale serve` or `ssh -L` "
            "(wisp docs web)."
        )
    from wisp import _startup

    _startup.resume()  # a face lives on (wisp._startup)
    try:
        code = serve(
            wisp_home(),
            host,
            port,
            tls=tls,
            say=say,
            warn=tell,
            hosts=machines or [],
            relay_command=relay_command,
        )
    except WebError as exc:
        fail(str(exc))
    raise typer.Exit(code)


@web_app.command(
    "pair",
    epilog="Examples:\n  wisp web pair\n  wisp web pair --url https://box.tail1234.ts.net",
)
def pair(
    url: Annotated[
        str | None,
        typer.Option(
            "--url",
            metavar="URL",
            help="Where the device reaches `wisp web` (default: the web.url setting, else "
            "http://127.0.0.1:8765).",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="The link and when it expires, as JSON.")
    ] = False,
) -> None:
    """Show a one-time pairing link and its QR code: opened on a device within 5 minutes, it
    pairs that one device. Only from a terminal. Exit 0 shown; 1 --url is no URL; 2 not a
    terminal, or the devices store cannot be used."""
    require_terminal("wisp web pair", "pairings", doing="pairing a device")
    from pending import format_time
    from wisp import SETTINGS, DeviceStore, StoreError, wisp_home
    from wisp.web import DEFAULT_HOST, DEFAULT_PORT, base_url

    base = url if url is not None else config_or_fail()["web.url"]
    if base and not SETTINGS["web.url"].check(base):
        refuse(f"--url takes an http:// or https:// URL with a host, not {base[:60]!r}.")
    base = (base or base_url(DEFAULT_HOST, DEFAULT_PORT, tls=False)).rstrip("/")
    try:
        code, expires = DeviceStore(wisp_home()).new_pairing()
    except StoreError as exc:
        fail(str(exc))
    link = f"{base}/pair/{code}"
    if as_json:
        print_json({"link": link, "expiresAt": format_time(expires)})
        return
    say("Open this link on the device to pair it (for one device, within 5 minutes):")
    say("")
    say(f"  {link}")
    say("")
    _qr(link)
    say("Then `wisp web devices` lists it, and `wisp web revoke NAME` ends it.")


def _qr(link: str) -> None:
    try:
        import segno
    except ImportError:
        from wisp._errors import install_hint

        tell(f"wisp: the QR code needs the web extra. {install_hint('web')}")
        return
    segno.make(link, error="m").terminal(out=sys.stdout, compact=True)
    sys.stdout.flush()


@web_app.command("devices", epilog="Examples:\n  wisp web devices\n  wisp web devices --json")
def devices(
    as_json: Annotated[bool, typer.Option("--json", help="A JSON array on stdout.")] = False,
) -> None:
    """The paired devices: name and when paired. Exit 0; 2 if the store cannot be used."""
    from pending import format_time
    from wisp import DeviceStore, StoreError, wisp_home

    try:
        found = DeviceStore(wisp_home()).devices()
    except StoreError as exc:
        fail(str(exc))
    if as_json:
        print_json([{"name": d.name, "pairedAt": format_time(d.paired_at)} for d in found])
        return
    if not found:
        say("No device is paired. Pair one: wisp web pair")
        return
    for device in found:
        say(f"{device.name:<32}  paired {format_time(device.paired_at)}")


@web_app.command("revoke", epilog="Example:\n  wisp web revoke phone")
def revoke(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The device's name.")],
) -> None:
    """End a paired device at once: its next page, answer or event is refused. Exit 0
    revoked; 1 no device has that name; 2 the store cannot be used."""
    from wisp import DeviceStore, StoreError, wisp_home

    try:
        ended = DeviceStore(wisp_home()).revoke(name)
    except StoreError as exc:
        fail(str(exc))
    if ended is None:
        refuse(f"no device is called {name[:40]!r}: `wisp web devices` lists them.")
    say(f"Revoked {ended.name}: it can no longer see or answer anything.")


__all__ = ["ExitCode", "web_app"]
