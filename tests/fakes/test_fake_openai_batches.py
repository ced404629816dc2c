"""The fake Files and Batch APIs keep OpenAI's rules, so batch tests against them mean something.

Each case is sent through the real ``openai`` SDK, as a batch client would send it.
"""

from __future__ import annotations

import io
import json
import threading
from typing import Any

import openai
import pytest

from fakes.fake_openai import FakeOpenAI

URL = "/v1/chat/completions"


@pytest.fixture
def server() -> Any:
    with FakeOpenAI(api_key="k") as fake:
        yield fake


@pytest.fixture
def sdk(server: FakeOpenAI) -> openai.OpenAI:
    return openai.OpenAI(api_key="k", base_url=server.base_url, max_retries=0)


def line(custom_id: str, text: str = "hi", *, model: str = "gpt-5-mini", **changes: Any) -> dict:
    body = {"model": model, "messages": [{"role": "user", "content": text}]}
    return {"custom_id": custom_id, "method": "POST", "url": URL, "body": body, **changes}


def upload(sdk: openai.OpenAI, lines: list[Any], name: str = "in.jsonl") -> Any:
    text = "".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in lines)
    return sdk.files.create(file=(name, io.BytesIO(text.encode())), purpose="batch")


def batch_of(sdk: openai.OpenAI, lines: list[Any], endpoint: str = URL) -> Any:
    uploaded = upload(sdk, lines)
    return sdk.batches.create(
        input_file_id=uploaded.id,
        endpoint=endpoint,  # type: ignore[arg-type]
        completion_window="24h",
    )


def ended(sdk: openai.OpenAI, batch_id: str) -> Any:
    for _look in range(5):
        batch = sdk.batches.retrieve(batch_id)
        if batch.status in ("completed", "failed", "expired", "cancelled"):
            return batch
    raise AssertionError(f"batch {batch_id} did not end: {batch.status}")


def lines_of(sdk: openai.OpenAI, file_id: str | None) -> list[dict[str, Any]]:
    if not file_id:
        return []
    return [json.loads(row) for row in sdk.files.content(file_id).text.splitlines()]


def refused(call: Any) -> str:
    with pytest.raises(openai.BadRequestError) as caught:
        call()
    return str(caught.value)


def failed_with(sdk: openai.OpenAI, lines: list[Any]) -> Any:
    batch = ended(sdk, batch_of(sdk, lines).id)
    assert batch.status == "failed"
    assert batch.errors is not None and batch.errors.data
    return batch.errors.data[0]


# -- uploads ----------------------------------------------------------------------------


def test_an_upload_needs_a_known_purpose_and_a_jsonl_file_for_batch(sdk):
    data = io.BytesIO(json.dumps(line("a")).encode() + b"\n")
    purpose: Any = "batches"
    assert "is not one of" in refused(
        lambda: sdk.files.create(file=("in.jsonl", data), purpose=purpose)
    )
    assert "Must be .jsonl" in refused(
        lambda: sdk.files.create(file=("in.json", data), purpose="batch")
    )
    stored = sdk.files.create(file=("in.jsonl", data), purpose="batch")
    assert (stored.purpose, stored.filename, stored.bytes) == (
        "batch",
        "in.jsonl",
        len(data.getvalue()),
    )
    assert sdk.files.retrieve(stored.id).id == stored.id


def test_a_batch_file_holds_at_most_max_bytes(server, sdk):
    server.batches.max_bytes = 200
    assert len(json.dumps(line("a")) + "\n") <= 200 < 2 * len(json.dumps(line("a")))
    upload(sdk, [line("a")])
    assert "too large" in refused(lambda: upload(sdk, [line("a"), line("b")]))


def test_a_wrong_key_is_refused(server):
    other = openai.OpenAI(api_key="wrong", base_url=server.base_url, max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        other.batches.list()


# -- making a batch ----------------------------------------------------------------------


def test_create_checks_its_file_endpoint_and_window(sdk):
    uploaded = upload(sdk, [line("a")])
    create = sdk.batches.create
    assert "No such File object" in refused(
        lambda: create(input_file_id="file-nope", endpoint=URL, completion_window="24h")
    )
    other = sdk.files.create(file=("x.jsonl", io.BytesIO(b"{}\n")), purpose="user_data")
    assert "purpose 'batch'" in refused(
        lambda: create(input_file_id=other.id, endpoint=URL, completion_window="24h")
    )
    endpoint: Any = "/v1/messages"
    assert "'endpoint'" in refused(
        lambda: create(input_file_id=uploaded.id, endpoint=endpoint, completion_window="24h")
    )
    window: Any = "1h"
    assert "'completion_window'" in refused(
        lambda: create(input_file_id=uploaded.id, endpoint=URL, completion_window=window)
    )
    many = {f"k{i}": "v" for i in range(17)}
    assert "metadata" in refused(
        lambda: create(
            input_file_id=uploaded.id, endpoint=URL, completion_window="24h", metadata=many
        )
    )


# -- validation: a batch that fails, naming the line ------------------------------------


def test_each_line_is_json_with_its_four_fields(sdk):
    error = failed_with(sdk, [line("a"), "{not json"])
    assert (error.code, error.line) == ("invalid_json_line", 2)
    missing = line("a")
    del missing["method"]
    error = failed_with(sdk, [missing])
    assert (error.code, error.line) == ("missing_required_parameter", 1)
    assert "'method'" in error.message


def test_custom_ids_match_the_pattern_and_are_unique(sdk):
    assert failed_with(sdk, [line("a b")]).code == "invalid_custom_id"
    assert failed_with(sdk, [line("x" * 65)]).code == "invalid_custom_id"
    error = failed_with(sdk, [line("a"), line("b"), line("a")])
    assert (error.code, error.line) == ("duplicate_custom_id", 3)


def test_method_post_url_of_the_endpoint_and_one_model(sdk):
    assert failed_with(sdk, [line("a", method="GET")]).code == "invalid_method"
    assert failed_with(sdk, [line("a", url="/v1/embeddings")]).code == "mismatched_url"
    error = failed_with(sdk, [line("a"), line("b", model="gpt-5-nano")])
    assert (error.code, error.line) == ("mismatched_model", 2)


def test_an_empty_file_and_too_many_requests_fail(server, sdk):
    assert failed_with(sdk, ["", ""]).code == "empty_file"
    server.batches.max_requests = 2
    assert failed_with(sdk, [line("a"), line("b"), line("c")]).code == "too_many_tasks"
    batch = ended(sdk, batch_of(sdk, [line("a"), line("b")]).id)
    assert batch.status == "completed"


# -- running ------------------------------------------------------------------------------


def test_statuses_advance_one_step_a_look_and_counts_follow(sdk):
    made = batch_of(sdk, [line("a"), line("b")])
    assert made.status == "validating"
    assert made.request_counts.total == 0  # not counted before validation
    seen = [sdk.batches.retrieve(made.id) for _look in range(3)]
    assert [b.status for b in seen] == ["in_progress", "finalizing", "completed"]
    assert seen[0].request_counts.total == 2 and seen[0].request_counts.completed == 0
    done = seen[-1]
    assert (done.request_counts.completed, done.request_counts.failed) == (2, 0)
    assert done.output_file_id and done.error_file_id is None
    answers = lines_of(sdk, done.output_file_id)
    assert {a["custom_id"] for a in answers} == {"a", "b"}
    first = answers[0]["response"]
    assert first["status_code"] == 200 and first["body"]["object"] == "chat.completion"


def test_output_lines_come_in_no_particular_order(sdk):
    ids = [f"q{i:02d}" for i in range(30)]
    done = ended(sdk, batch_of(sdk, [line(i) for i in ids]).id)
    order = [a["custom_id"] for a in lines_of(sdk, done.output_file_id)]
    assert sorted(order) == ids and order != ids


def test_a_refused_request_goes_to_the_error_file(server, sdk):
    server.enqueue_error(
        429, message="slow down", when=lambda body: body["messages"][0]["content"] == "b"
    )
    bad = line("c")
    bad["body"]["temperature"] = 0.5  # gpt-5 models take only 1
    streamed = line("d")
    streamed["body"]["stream"] = True
    done = ended(sdk, batch_of(sdk, [line("a"), line("b", "b"), bad, streamed]).id)
    assert (done.request_counts.completed, done.request_counts.failed) == (1, 3)
    errors = {e["custom_id"]: e for e in lines_of(sdk, done.error_file_id)}
    assert errors["b"]["response"]["status_code"] == 429
    assert errors["b"]["response"]["body"]["error"]["message"] == "slow down"
    assert errors["c"]["response"]["status_code"] == 400
    assert "Streaming is not supported" in errors["d"]["response"]["body"]["error"]["message"]
    assert all(e["error"] is None for e in errors.values())


def test_a_slow_batch_runs_as_told_and_expires(server, sdk):
    server.batches.auto = False
    made = batch_of(sdk, [line(f"q{i}") for i in range(5)])
    assert sdk.batches.retrieve(made.id).status == "in_progress"
    server.batches.run(made.id, 2)
    running = sdk.batches.retrieve(made.id)
    assert running.status == "in_progress" and running.request_counts.completed == 2
    server.batches.expire(made.id)
    done = sdk.batches.retrieve(made.id)
    assert done.status == "expired" and done.expired_at
    assert (done.request_counts.completed, done.request_counts.failed) == (2, 0)
    assert len(lines_of(sdk, done.output_file_id)) == 2
    never = lines_of(sdk, done.error_file_id)
    assert len(never) == 3
    assert {e["error"]["code"] for e in never} == {"batch_expired"}
    assert all(e["response"] is None for e in never)


def test_cancel_keeps_what_ran_and_cancels_the_rest(server, sdk):
    server.batches.auto = False
    made = batch_of(sdk, [line(f"q{i}") for i in range(4)])
    sdk.batches.retrieve(made.id)
    server.batches.run(made.id, 1)
    assert sdk.batches.cancel(made.id).status == "cancelling"
    done = sdk.batches.retrieve(made.id)
    assert done.status == "cancelled" and done.cancelled_at
    assert len(lines_of(sdk, done.output_file_id)) == 1
    assert {e["error"]["code"] for e in lines_of(sdk, done.error_file_id)} == {"batch_cancelled"}
    assert "Cannot cancel a batch with status 'cancelled'" in refused(
        lambda: sdk.batches.cancel(made.id)
    )


def test_batches_are_listed_newest_first_by_page(sdk):
    made = [batch_of(sdk, [line("a")]).id for _ in range(3)]
    page = sdk.batches.list(limit=2)
    assert [b.id for b in page.data] == made[::-1][:2] and page.has_more
    assert [b.id for b in sdk.batches.list(limit=2, after=made[1]).data] == [made[0]]
    assert [b.id for b in sdk.batches.list()] == made[::-1]


def test_file_content_can_be_held_after_some_lines(server, sdk):
    done = ended(sdk, batch_of(sdk, [line(f"q{i}") for i in range(6)]).id)
    server.batches.hold_after = 2
    got: list[str] = []

    def read() -> None:
        with sdk.files.with_streaming_response.content(done.output_file_id) as response:
            got.extend(response.iter_lines())

    reader = threading.Thread(target=read)
    reader.start()
    reader.join(0.5)
    assert reader.is_alive() and server.batches.served_lines == 2
    server.batches.release.set()
    reader.join(5)
    assert len(got) == 6


# -- Azure --------------------------------------------------------------------------------


def test_azure_serves_the_same_api_under_openai_with_its_version(server):
    azure = openai.AzureOpenAI(
        api_key="k", azure_endpoint=server.origin, api_version="2024-10-21", max_retries=0
    )
    row = {**line("a", model="my-batch-deployment"), "url": "/chat/completions"}
    uploaded = azure.files.create(
        file=("in.jsonl", io.BytesIO(json.dumps(row).encode() + b"\n")), purpose="batch"
    )
    made = azure.batches.create(
        input_file_id=uploaded.id,
        endpoint="/chat/completions",  # type: ignore[arg-type]
        completion_window="24h",
    )
    assert made.output_file_id == "" and made.error_file_id == ""  # none yet, as Azure says
    paths = {r.path for r in server.requests}
    assert {"/openai/files", "/openai/batches"} <= paths
    assert all(r.query.get("api-version") == ["2024-10-21"] for r in server.requests)
    done = ended(azure, made.id)
    assert done.status == "completed" and done.error_file_id == ""
    assert lines_of(azure, done.output_file_id)[0]["custom_id"] == "a"
    with pytest.raises(AssertionError, match="Azure does not expire"):
        server.batches.expire(made.id)


def test_failing_requests_finishing_and_expiring_every_batch_at_once(server, sdk):
    server.batches.auto = False
    server.batches.fail(lambda body: "Oslo" in str(body["messages"]))
    first = batch_of(sdk, [line("a", "Paris"), line("b", "Oslo")])
    second = batch_of(sdk, [line("c", "Lima")])
    server.batches.finish()
    done = ended(sdk, first.id)
    assert (done.request_counts.completed, done.request_counts.failed) == (1, 1)
    (error,) = lines_of(sdk, done.error_file_id)
    assert (error["custom_id"], error["response"]["status_code"]) == ("b", 500)
    assert ended(sdk, second.id).status == "completed"
    third = batch_of(sdk, [line("d")])
    server.batches.expire()
    assert ended(sdk, third.id).status == "expired"
    assert ended(sdk, first.id).status == "completed"  # an ended batch stays as it ended


def test_uploads_can_be_refused_and_never_run_requests_left_unsaid(server, sdk):
    server.batches.refused_uploads = [None, 500]
    upload(sdk, [line("a")])
    with pytest.raises(openai.InternalServerError):
        upload(sdk, [line("a")])
    upload(sdk, [line("a")])
    server.batches.auto = False
    server.batches.silent_not_run = True
    made = batch_of(sdk, [line("a"), line("b")])
    sdk.batches.retrieve(made.id)
    server.batches.run(made.id, 1)
    server.batches.expire(made.id)
    done = ended(sdk, made.id)
    assert done.status == "expired" and done.error_file_id is None
    assert len(lines_of(sdk, done.output_file_id)) == 1
