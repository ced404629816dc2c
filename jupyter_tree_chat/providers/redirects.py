"""Keys stay home: a request that carries a key never follows a redirect away.

An endpoint's key travels in headers (``x-api-key``, ``Authorization``, Azure's
``api-key``). What the HTTP libraries do with them on a redirect, by default:

- ``urllib`` (the probe, probe.py) follows any redirect and keeps every header it was
  given, to any host;
- ``httpx`` (``httpx2`` under both official SDKs, whose default clients set
  ``follow_redirects=True``) drops ``Authorization`` when the redirect leaves the origin
  but keeps every other header, ``x-api-key`` and ``api-key`` among them.

So every client the project builds is checked here before it follows a redirect: one to
the same host, and not from https to http, is followed (a server moving a path, or
http to https); any other is refused with ``RedirectRefused``, one line naming where it
pointed and the fix, and the request is never sent there. The SDKs' clients get an
``httpx`` response hook (``guarded_http_client``); the probe gets a redirect handler
(``GuardedRedirects``). The ``mcp`` SDK's Streamable HTTP transport (servers.py) already
follows a redirect only on the endpoint's origin, whatever its client's setting.
"""

from __future__ import annotations

import urllib.parse
import urllib.request
from collections.abc import Callable
from http.client import HTTPMessage
from types import ModuleType
from typing import IO, Any

from ..errors import RedirectRefused
from ..i18n import _


def refused_redirect(from_url: str, to_url: str) -> str | None:
    """Why a request to ``from_url`` may not follow a redirect to ``to_url`` (absolute),
    or None when it may: the same host and port (or the same host from http up to https),
    and no step down from https to http."""
    before, after = urllib.parse.urlsplit(from_url), urllib.parse.urlsplit(to_url)
    if before.scheme == "https" and after.scheme != "https":
        why = _("from https to {scheme}").format(scheme=after.scheme or "?")
    elif before.hostname != after.hostname or (
        _port(before) != _port(after) and (before.scheme, after.scheme) != ("http", "https")
    ):
        why = _("to another host ({host})").format(host=after.netloc or "?")
    else:  # the same host and port, or the same host from http up to https
        return None
    return _(
        "{url} redirects {why}; a request that carries a key does not follow it. If the "
        "server has moved, set the endpoint's base URL to where it points now"
    ).format(url=_without_query(from_url), why=why)


def _port(url: urllib.parse.SplitResult) -> int | None:
    try:
        return url.port or {"http": 80, "https": 443}.get(url.scheme)
    except ValueError:
        return None


def _without_query(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


# -- the SDKs (httpx) -------------------------------------------------------------------

_SDK_ERRORS: dict[str, type[RedirectRefused]] = {}


def _sdk_error(sdk: ModuleType, base: type[Exception]) -> type[RedirectRefused]:
    """``RedirectRefused`` that is also the SDK's own base error, so the SDK passes it on
    as it is (no retry, no wrapping as a connection error) and the provider sees ours."""
    found = _SDK_ERRORS.get(sdk.__name__)
    if found is None:
        found = type(f"{base.__name__}RedirectRefused", (RedirectRefused, base), {})
        _SDK_ERRORS[sdk.__name__] = found
    return found


def redirect_check(error_type: type[Exception]) -> Callable[[Any], None]:
    """An httpx response hook: a redirect the key may not follow raises ``error_type``."""

    def check(response: Any) -> None:
        if not response.has_redirect_location:
            return
        source = response.request.url
        target = source.join(response.headers["location"])
        why = refused_redirect(str(source), str(target))
        if why is not None:
            response.close()
            raise error_type(why)

    return check


def guarded_http_client(sdk: ModuleType, base_error: type[Exception]) -> Any:
    """The SDK's own default client (its timeouts, limits, keep-alive; it follows
    redirects), with the check above on every response."""
    check = redirect_check(_sdk_error(sdk, base_error))
    return sdk.DefaultHttpxClient(event_hooks={"response": [check]})


# -- the probe (urllib) -----------------------------------------------------------------


class GuardedRedirects(urllib.request.HTTPRedirectHandler):
    """urllib's redirect handler, refusing what ``refused_redirect`` refuses."""

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        why = refused_redirect(req.full_url, urllib.parse.urljoin(req.full_url, newurl))
        if why is not None:
            fp.close()
            raise RedirectRefused(why)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


#: the opener the probe uses: urllib's defaults, redirects checked
guarded_opener = urllib.request.build_opener(GuardedRedirects)
