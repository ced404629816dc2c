"""Keys stay home: no request carrying a key follows a redirect to another host.

Two loopback hosts stand for two machines: the endpoint on ``127.0.0.1`` answers every
request with a redirect to ``127.0.0.2`` (another host), or to itself on another path
(the same host, which is followed). The other host records every request it gets. Each
client the project builds is tried: the probe (urllib), the Anthropic SDK's client and the
OpenAI SDK's (plain and Azure), each as the product builds it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from jupyter_tree_chat.errors import RedirectRefused
from jupyter_tree_chat.providers.anthropic.provider import AnthropicProvider
from jupyter_tree_chat.providers.base import ReplyRequest
from jupyter_tree_chat.providers.endpoints.probe import probe
from jupyter_tree_chat.providers.openai.provider import OpenAIChatProvider
from jupyter_tree_chat.providers.redirects import refused_redirect

KEY = "sk-redirect-secret-0123456789"


class Host:
    """A loopback HTTP server: records what it gets; redirects (``to``) or answers."""

    def __init__(self, address: str) -> None:
        self.seen: list[dict[str, Any]] = []
        self.to: str | None = None  # a Location to answer with (307), or None
        host = self

        class Handler(BaseHTTPRequestHandler):
            def do_any(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                host.seen.append({"path": self.path, "headers": headers})
                if host.to is not None and not self.path.startswith("/moved"):
                    self.send_response(307)
                    self.send_header("location", host.to)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                body = json.dumps({"data": [{"id": "model-here"}]}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_any

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer((address, 0), Handler)
        self.url = f"http://{address}:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def keys_seen(self) -> list[str]:
        return [v for r in self.seen for v in r["headers"].values() if KEY in v]


@pytest.fixture
def hosts() -> Iterator[tuple[Host, Host]]:
    endpoint, other = Host("127.0.0.1"), Host("127.0.0.2")
    endpoint.to = f"{other.url}/v1/stolen"
    yield endpoint, other
    for host in (endpoint, other):
        host.server.shutdown()
        host.server.server_close()


def ask(provider: Any) -> list[Any]:
    request = ReplyRequest(messages=[{"role": "user", "content": "hello"}], model="m")
    return list(provider.stream(request))


def test_the_probe_does_not_follow_a_redirect_to_another_host(hosts):
    endpoint, other = hosts

    found = probe(f"{endpoint.url}/v1/models", KEY)

    assert other.seen == []
    assert found.answering and found.models is None
    assert "redirects to another host (127.0.0.2:" in found.problem
    assert KEY not in found.problem


def test_the_probe_follows_a_redirect_on_the_same_host(hosts):
    endpoint, _other = hosts
    endpoint.to = f"{endpoint.url}/moved/v1/models"

    found = probe(f"{endpoint.url}/v1/models", KEY)

    assert found.problem is None
    assert [m.id for m in found.models] == ["model-here"]
    assert [r["path"].split("?")[0] for r in endpoint.seen] == ["/v1/models", "/moved/v1/models"]


def test_the_anthropic_client_does_not_follow_a_redirect_to_another_host(hosts):
    endpoint, other = hosts
    provider = AnthropicProvider(api_key=KEY, base_url=endpoint.url, max_retries=0)

    with pytest.raises(RedirectRefused) as raised:
        ask(provider)

    assert other.seen == []
    assert len(endpoint.seen) == 1  # refused at once: not retried
    assert endpoint.keys_seen()  # the key went to its endpoint, and no farther
    assert str(raised.value).startswith(f"{endpoint.url}/v1/messages redirects to another host")
    assert "\n" not in str(raised.value) and KEY not in str(raised.value)


def test_the_openai_client_does_not_follow_a_redirect_to_another_host(hosts):
    endpoint, other = hosts
    provider = OpenAIChatProvider(base_url=f"{endpoint.url}/v1", api_key=KEY, max_retries=0)

    with pytest.raises(RedirectRefused) as raised:
        ask(provider)

    assert other.seen == []
    assert endpoint.seen[0]["headers"]["authorization"] == f"Bearer {KEY}"
    assert "/v1/chat/completions redirects to another host (127.0.0.2:" in str(raised.value)


def test_the_azure_client_does_not_follow_a_redirect_to_another_host(hosts):
    endpoint, other = hosts
    provider = OpenAIChatProvider(
        base_url=endpoint.url,
        api_key=KEY,
        azure_api_version="2024-10-21",
        azure_deployment="dep",
        max_retries=0,
    )

    with pytest.raises(RedirectRefused):
        ask(provider)

    assert other.seen == [] and other.keys_seen() == []
    assert endpoint.seen[0]["headers"]["api-key"] == KEY


@pytest.mark.parametrize(
    ("before", "after", "refused"),
    [
        ("https://api.example.com/v1/models", "https://api.example.com/v2/models", False),
        ("http://api.example.com/v1/models", "https://api.example.com/v1/models", False),
        ("https://api.example.com/v1/models", "http://api.example.com/v1/models", True),
        ("https://api.example.com/v1/models", "https://evil.example.net/v1/models", True),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:9000/v1", True),
        ("https://api.example.com/v1", "https://api.example.com:443/v2", False),
    ],
)
def test_a_redirect_is_followed_only_on_the_same_host_and_never_down_to_http(
    before, after, refused
):
    assert (refused_redirect(before, after) is not None) is refused
