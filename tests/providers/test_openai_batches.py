"""OpenAI's Batch API as a ``BatchWire`` (providers/openai/batches.py), through the real
``openai`` SDK against the fake Files and Batch APIs (tests/fakes/fake_openai_batches.py)."""

from __future__ import annotations

import logging
import threading
from dataclasses import replace
from typing import Any

import pytest
from fakes.fake_openai import FakeOpenAI
from test_redirects import hosts  # noqa: F401 - the fixture, shared in this folder

from jupyter_tree_chat.errors import (
    AuthenticationFailed,
    BadRequest,
    EndpointRefuses,
    RedirectRefused,
    ServerError,
)
from jupyter_tree_chat.providers.base import Finished, ReplyRequest, ToolSpec
from jupyter_tree_chat.providers.batches import BatchItem, BatchLimits, BatchWire, batch_wire
from jupyter_tree_chat.providers.endpoints.config import PRESETS
from jupyter_tree_chat.providers.endpoints.entries import configured, endpoint_table
from jupyter_tree_chat.providers.endpoints.router import Router, service_for
from jupyter_tree_chat.providers.offline.provider import OfflineProvider
from jupyter_tree_chat.providers.openai.batches import AZURE_LIMITS, OPENAI_LIMITS, OpenAIBatches
from jupyter_tree_chat.providers.openai.provider import OpenAIChatProvider, endpoint_batches
from jupyter_tree_chat.providers.openai.wire import build_params

KEY = "sk-batch-secret-0123456789"
ADD = ToolSpec(
    "add", "Add two numbers", {"type": "object", "properties": {"a": {"type": "integer"}}}
)


@pytest.fixture
def server() -> Any:
    with FakeOpenAI(api_key=KEY) as fake:
        yield fake


def wire_for(server: FakeOpenAI, **options: Any) -> OpenAIBatches:
    """The wire as ``endpoint_batches`` makes it for the ``openai`` preset, at the fake."""
    provider = OpenAIChatProvider(base_url=server.base_url, api_key=KEY, max_retries=0)
    return OpenAIBatches(
        provider.client,
        service=provider.service,
        errors=provider.provider_error,
        key=KEY,
        supports=PRESETS["openai"].supports,
        **options,
    )


def question(text: str, **changes: Any) -> ReplyRequest:
    return ReplyRequest([{"role": "user", "content": text}], "gpt-5-mini", **changes)


def items(count: int, **changes: Any) -> list[BatchItem]:
    return [BatchItem(f"q{i}", question(f"question {i}", **changes)) for i in range(count)]


def asked(text: str) -> Any:
    return lambda body: body["messages"][-1]["content"] == text


def results_of(wire: OpenAIBatches, batch_id: str) -> dict[str, Any]:
    found = {}
    for result in wire.results(batch_id):
        assert result.custom_id not in found, "a request answered twice"
        found[result.custom_id] = result
    return found


def until_ended(wire: OpenAIBatches, batch_id: str) -> Any:
    for _look in range(6):
        state = wire.state(batch_id)
        if state.ended:
            return state
    raise AssertionError(f"{batch_id} did not end")


# -- submit ------------------------------------------------------------------------------


def test_each_request_is_one_line_built_as_the_stream_builds_it_but_not_streamed(server):
    wire = wire_for(server)
    request = ReplyRequest(
        [{"role": "user", "content": "Add 1 and 2"}],
        "gpt-5-mini",
        max_tokens=300,
        system="Be brief.",
        tools=(ADD,),
        thinking=2048,
    )
    state = wire.submit([BatchItem("row-1", request), *items(2)])

    assert state.status == "in_progress" and state.counts.processing == 3
    assert state.expires_at and state.expires_at.endswith("Z")
    lines = server.batches.input_lines(state.id)
    assert [line["custom_id"] for line in lines] == ["row-1", "q0", "q1"]
    assert {(line["method"], line["url"]) for line in lines} == {("POST", "/v1/chat/completions")}
    assert lines[0]["body"] == build_params(request, PRESETS["openai"].supports)
    assert "stream" not in lines[0]["body"] and "stream_options" not in lines[0]["body"]
    made = server.batches.batches[state.id]
    assert (made.endpoint, made.metadata) == ("/v1/chat/completions", {"requests": "3"})
    upload = next(r for r in server.requests if r.path == "/v1/files")
    assert upload.headers["content-type"].startswith("multipart/form-data")


def test_a_request_without_a_model_is_sent_the_default_one(server):
    wire = wire_for(server, default_model="gpt-5-nano")
    state = wire.submit([BatchItem("a", ReplyRequest([{"role": "user", "content": "x"}], ""))])
    assert server.batches.input_lines(state.id)[0]["body"]["model"] == "gpt-5-nano"


def test_custom_ids_are_checked_before_anything_is_sent(server):
    wire = wire_for(server)
    with pytest.raises(ValueError, match="1 to 64 letters"):
        wire.submit([BatchItem("row 1", question("x"))])
    with pytest.raises(ValueError, match="used twice"):
        wire.submit([BatchItem("a", question("x")), BatchItem("a", question("y"))])
    assert server.requests == []


# -- state -------------------------------------------------------------------------------


def test_state_maps_the_statuses_and_counts_as_the_contract_says(server):
    server.batches.auto = False
    wire = wire_for(server)
    state = wire.submit(items(5))
    assert server.batches.batches[state.id].status == "validating"
    assert wire.state(state.id).counts.processing == 5  # validated: in_progress
    server.batches.run(state.id, 2)
    running = wire.state(state.id)
    assert (running.status, running.counts.processing, running.counts.succeeded) == (
        "in_progress",
        3,
        2,
    )
    server.batches.finish(state.id)
    done = wire.state(state.id)
    assert done.ended and done.counts.succeeded == 5 and done.counts.done == 5


def test_a_finalizing_batch_is_still_in_progress(server):
    wire = wire_for(server)
    state = wire.submit(items(2))
    seen = [wire.state(state.id).status for _look in range(3)]
    assert [server.batches.batches[state.id].status] == ["completed"]
    assert seen == ["in_progress", "in_progress", "ended"]  # in_progress, finalizing, completed


# -- results ------------------------------------------------------------------------------


def test_a_success_is_finished_as_the_stream_would_finish_it(server):
    server.enqueue(text="Cut sh", finish_reason="length")
    stream = OpenAIChatProvider(base_url=server.base_url, api_key=KEY).stream(question("same"))
    streamed = list(stream)[-1]
    usage = {"prompt_tokens": 100, "prompt_tokens_details": {"cached_tokens": 40}}
    server.enqueue(text="Three.", usage=usage, when=asked("question 0"))
    server.enqueue(text="Cut sh", finish_reason="length", when=asked("question 1"))
    wire = wire_for(server)
    state = wire.submit(items(2))

    found = results_of(wire, until_ended(wire, state.id).id)

    first, cut = found["q0"], found["q1"]
    assert first.outcome == "succeeded" and first.error is None
    assert isinstance(first.finished, Finished)
    assert first.finished.message == {
        "role": "assistant",
        "content": [{"type": "text", "text": "Three."}],
    }
    assert first.finished.usage == {
        "input_tokens": 60,
        "output_tokens": first.finished.usage["output_tokens"],
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 40,
    }
    assert (first.finished.stop_reason, first.finished.model) == ("end_turn", "gpt-5-mini")
    assert isinstance(streamed, Finished)
    assert (cut.finished.message, cut.finished.stop_reason) == (
        streamed.message,
        streamed.stop_reason,
    )
    assert cut.finished.stop_reason == "max_tokens"


def test_tool_calls_come_back_as_tool_use_blocks(server):
    server.enqueue(
        text="Let me add.",
        tool_calls=[{"name": "add", "arguments": {"a": 1}}, {"name": "add", "arguments": {"a": 2}}],
    )
    wire = wire_for(server)
    state = wire.submit([BatchItem("t", question("add", tools=(ADD,)))])

    (result,) = wire.results(until_ended(wire, state.id).id)

    content = result.finished.message["content"]
    assert content[0] == {"type": "text", "text": "Let me add."}
    assert [(b["type"], b["name"], b["input"]) for b in content[1:]] == [
        ("tool_use", "add", {"a": 1}),
        ("tool_use", "add", {"a": 2}),
    ]
    assert all(b["id"].startswith("call_") for b in content[1:])
    assert result.finished.stop_reason == "tool_use"


def test_a_refusal_is_read_as_the_stream_reads_it(server):
    server.enqueue(refusal="I can't help with that.")
    wire = wire_for(server)
    state = wire.submit(items(1))
    (result,) = wire.results(until_ended(wire, state.id).id)
    assert result.finished.stop_reason == "refusal"
    assert result.finished.message["content"] == [
        {"type": "text", "text": "I can't help with that."}
    ]


def test_a_refused_request_is_errored_with_one_line_saying_why(server):
    server.enqueue_error(
        400, message="Invalid 'messages':\nbad   content", when=asked("question 1")
    )
    wire = wire_for(server)
    state = wire.submit(items(3))
    done = until_ended(wire, state.id)
    assert (done.counts.succeeded, done.counts.errored) == (2, 1)

    found = results_of(wire, done.id)

    assert found["q1"].outcome == "errored" and found["q1"].finished is None
    assert (
        found["q1"].error
        == "OpenAI's API refused this request (400): Invalid 'messages': bad content"
    )
    assert {found["q0"].outcome, found["q2"].outcome} == {"succeeded"}


def test_requests_never_run_are_expired_when_the_window_closed(server):
    server.batches.auto = False
    wire = wire_for(server)
    state = wire.submit(items(5))
    wire.state(state.id)
    server.batches.run(state.id, 2)
    server.batches.expire(state.id)

    done = wire.state(state.id)
    found = results_of(wire, state.id)

    assert done.ended and (done.counts.succeeded, done.counts.expired) == (2, 3)
    assert sorted(r.outcome for r in found.values()) == ["expired"] * 3 + ["succeeded"] * 2
    expired = next(r for r in found.values() if r.outcome == "expired")
    assert expired.error and "completion window expired" in expired.error


def test_cancel_keeps_what_ran_and_the_rest_is_canceled(server):
    server.batches.auto = False
    wire = wire_for(server)
    state = wire.submit(items(4))
    wire.state(state.id)
    server.batches.run(state.id, 1)

    canceling = wire.cancel(state.id)
    done = wire.state(state.id)
    found = results_of(wire, state.id)

    assert canceling.status == "canceling" and not canceling.ended
    assert done.ended and (done.counts.succeeded, done.counts.canceled) == (1, 3)
    assert sorted(r.outcome for r in found.values()) == ["canceled"] * 3 + ["succeeded"]
    assert wire.cancel(state.id).ended  # an ended batch is not asked again


def test_requests_no_file_mentions_are_found_in_the_input_file(server):
    server.batches.auto = False
    server.batches.silent_not_run = True
    wire = wire_for(server)
    state = wire.submit(items(4))
    wire.state(state.id)
    server.batches.run(state.id, 1)
    wire.cancel(state.id)

    found = results_of(wire, until_ended(wire, state.id).id)

    assert sorted(found) == ["q0", "q1", "q2", "q3"]
    assert sorted(r.outcome for r in found.values()) == ["canceled"] * 3 + ["succeeded"]
    assert found["q3"].error == "The batch was cancelled before this request ran"


def test_a_part_that_cannot_be_sent_cancels_the_parts_already_made(server):
    wire = wire_for(server, limits=BatchLimits(requests=2, bytes=10_000))
    server.batches.refused_uploads = [None, 500]  # the second file's upload fails

    with pytest.raises(ServerError, match="500"):
        wire.submit(items(4))

    (made,) = server.batches.batches.values()
    assert made.status == "cancelling"  # nothing is left running that no record names


def test_a_file_the_api_refused_makes_every_request_errored_with_its_line(server):
    server.batches.max_requests = 2  # a server that takes fewer than the wire thinks
    wire = wire_for(server)
    state = wire.submit(items(3))
    done = until_ended(wire, state.id)
    assert done.ended and done.counts.errored == 3

    found = results_of(wire, state.id)

    assert sorted(found) == ["q0", "q1", "q2"]
    assert {r.outcome for r in found.values()} == {"errored"}
    assert found["q0"].error == (
        "OpenAI's API refused the batch file: The batch input file is larger than the 2 "
        "maximum number of requests."
    )


def test_results_of_a_batch_still_running_are_refused_in_one_line(server):
    server.batches.auto = False
    wire = wire_for(server)
    state = wire.submit(items(1))
    with pytest.raises(BadRequest, match="has not ended yet") as raised:
        list(wire.results(state.id))
    assert "\n" not in str(raised.value)


def test_results_arrive_one_by_one_while_the_file_is_still_coming(server):
    wire = wire_for(server)
    state = wire.submit(items(20))
    until_ended(wire, state.id)
    server.batches.hold_after = 1
    results = wire.results(state.id)
    got: list[Any] = []
    reader = threading.Thread(target=lambda: got.append(next(results)))

    reader.start()
    reader.join(10)

    assert got and got[0].outcome == "succeeded"  # the first, while the rest is held
    assert server.batches.served_lines == 1
    server.batches.release.set()
    assert len(got) + len(list(results)) == 20


# -- split at the limits -------------------------------------------------------------------


def test_more_than_a_file_holds_is_split_into_batches_read_as_one(server):
    wire = wire_for(server, limits=BatchLimits(requests=2, bytes=10_000))
    server.batches.max_requests = 2
    state = wire.submit(items(5))

    parts = state.id.split("+")
    assert len(parts) == 3 and state.counts.processing == 5
    assert [len(server.batches.input_lines(p)) for p in parts] == [2, 2, 1]
    done = until_ended(wire, state.id)
    assert done.ended and done.counts.succeeded == 5
    assert sorted(results_of(wire, state.id)) == [f"q{i}" for i in range(5)]


def test_a_file_is_split_at_its_byte_limit_and_at_each_model(server):
    one_line = len(wire_for(server).line(items(1)[0]))
    wire = wire_for(server, limits=BatchLimits(requests=100, bytes=2 * one_line + 10))
    server.batches.max_bytes = 2 * one_line + 10
    mixed = [
        *items(3),
        BatchItem("nano", ReplyRequest([{"role": "user", "content": "q"}], "gpt-5-nano")),
    ]

    state = wire.submit(mixed)

    parts = state.id.split("+")
    files = [server.batches.input_lines(p) for p in parts]
    assert [[line["custom_id"] for line in f] for f in files] == [["q0", "q1"], ["q2"], ["nano"]]
    assert all(len({line["body"]["model"] for line in f}) == 1 for f in files)
    assert len(results_of(wire, until_ended(wire, state.id).id)) == 4


def test_cancel_of_a_split_batch_cancels_every_part(server):
    server.batches.auto = False
    wire = wire_for(server, limits=BatchLimits(requests=2, bytes=10_000))
    state = wire.submit(items(4))
    canceling = wire.cancel(state.id)
    assert canceling.status == "canceling"
    assert {server.batches.batches[p].status for p in state.id.split("+")} == {"cancelling"}
    done = wire.state(state.id)
    assert done.ended and done.counts.canceled == 4


def test_a_request_larger_than_a_file_is_refused_before_anything_is_sent(server):
    wire = wire_for(server, limits=BatchLimits(requests=10, bytes=100))
    with pytest.raises(BadRequest, match="alone is larger than a batch file may be"):
        wire.submit(items(1))
    assert server.requests == []


def test_the_limits_are_the_vendors(server):
    assert (OPENAI_LIMITS.requests, OPENAI_LIMITS.bytes) == (50_000, 200_000_000)
    assert (AZURE_LIMITS.requests, AZURE_LIMITS.bytes) == (100_000, 200_000_000)
    assert wire_for(server).limits == OPENAI_LIMITS


# -- the endpoint, its key, Azure ----------------------------------------------------------


def test_endpoint_batches_makes_the_wire_for_a_preset(server):
    endpoint = configured("openai", {"base_url": server.base_url}, PRESETS["openai"])
    assert endpoint.batch and endpoint.batch_price == 0.5
    wire = endpoint_batches(
        endpoint.base_url, KEY, endpoint.supports, service_for(endpoint), **endpoint.wire_options()
    )
    assert isinstance(wire, BatchWire)
    assert (wire.name, wire.limits) == ("openai", OPENAI_LIMITS)
    state = wire.submit(items(1))
    assert until_ended(wire, state.id).counts.succeeded == 1


def test_azure_sends_to_its_resource_with_the_deployment_as_the_model(server):
    azure = configured(
        "azure",
        {"base_url": server.origin, "deployment": "gpt-batch"},
        PRESETS["azure"],
    )
    assert azure.batch and azure.batch_price == 0.5
    wire = endpoint_batches(
        azure.base_url, KEY, azure.supports, service_for(azure), **azure.wire_options()
    )
    state = wire.submit(items(2))

    lines = server.batches.input_lines(state.id)
    assert (wire.name, wire.limits) == ("azure", AZURE_LIMITS)
    assert {line["url"] for line in lines} == {"/chat/completions"}
    assert {line["body"]["model"] for line in lines} == {"gpt-batch"}
    assert server.batches.batches[state.id].endpoint == "/chat/completions"
    assert {r.path for r in server.requests} >= {"/openai/files", "/openai/batches"}
    assert all(r.query["api-version"] == ["2024-10-21"] for r in server.requests)
    assert all(r.headers["api-key"] == KEY for r in server.requests)
    done = until_ended(wire, state.id)  # its "" for files not made is read as none
    assert sorted(results_of(wire, done.id)) == ["q0", "q1"]


def test_a_refused_key_is_one_line_without_the_key(server):
    wire = OpenAIChatProvider(
        base_url=server.base_url, api_key="sk-wrong-key-42", max_retries=0
    ).batch_wire()
    with pytest.raises(AuthenticationFailed) as raised:
        wire.submit(items(1))
    assert "refused the key (401)" in str(raised.value)
    assert "sk-wrong-key-42" not in str(raised.value) and "\n" not in str(raised.value)


def test_the_key_is_in_no_file_result_state_repr_or_log(server, caplog):
    caplog.set_level(logging.DEBUG)
    server.enqueue_error(400, message=f"no such key {KEY} here", when=asked("question 0"))
    wire = wire_for(server)
    state = wire.submit(items(2))
    done = until_ended(wire, state.id)
    found = results_of(wire, done.id)

    assert "[redacted]" in found["q0"].error
    shown = [repr(wire), repr(state), repr(done), *map(repr, found.values()), caplog.text]
    shown += [str(server.batches.input_lines(state.id))]
    assert not [text for text in shown if KEY in text]


def test_the_key_does_not_follow_a_redirect_to_another_host(hosts):  # noqa: F811
    endpoint, other = hosts
    wire = OpenAIChatProvider(
        base_url=f"{endpoint.url}/v1", api_key=KEY, max_retries=0
    ).batch_wire()
    with pytest.raises(RedirectRefused) as raised:
        wire.submit(items(1))
    assert other.seen == []
    assert "/v1/files redirects to another host (127.0.0.2:" in str(raised.value)
    assert KEY not in str(raised.value)


def test_the_router_gives_openai_s_batch_api_by_the_model_s_endpoint(server, monkeypatch):
    table = endpoint_table(
        {
            "openai": {"base_url": server.base_url},
            "gemini": {"base_url": server.base_url},
            "azure": {"base_url": server.origin, "deployment": "gpt-batch"},
        }
    )
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    router = Router(OfflineProvider(), table)
    with pytest.raises(EndpointRefuses, match=r"^gemini has no batch API"):
        batch_wire(router, "gemini:gemini-2.5-flash")
    wire = batch_wire(router, "openai:gpt-5-nano")
    assert (wire.name, wire.limits, getattr(wire, "price", None)) == ("openai", OPENAI_LIMITS, 0.5)
    request = ReplyRequest([{"role": "user", "content": "hi"}], "openai:gpt-5-nano")
    state = wire.submit([BatchItem("x-0", request)])
    assert server.batches.input_lines(state.id)[0]["body"]["model"] == "gpt-5-nano"
    azure = batch_wire(router, "azure:anything")
    assert (azure.name, azure.limits) == ("azure", AZURE_LIMITS)
    state = azure.submit([BatchItem("x-1", replace(request, model="azure:anything"))])
    assert server.batches.input_lines(state.id)[0]["body"]["model"] == "gpt-batch"
