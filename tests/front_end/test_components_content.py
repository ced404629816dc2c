"""A message's blocks as the front end shows them (labextension/src/components/content.ts).

Run under Node on the file's own block shapes: an image reaches the page only as a
``data:`` URL of a raster type built from plain base64; every other image (an SVG, a
``javascript:`` or remote URL, data with markup in it) becomes a part that says why
nothing is shown, and a document is shown by its title.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.content_blocks import image_block, pdf_block, url_image
from helpers.node_runner import node_module

RUNNER = """
import { partsOf } from './bundle.mjs';
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const blocks = JSON.parse(Buffer.concat(chunks).toString());
process.stdout.write(JSON.stringify(partsOf({ content: blocks })));
"""


@pytest.fixture(scope="module")
def parts_of(tmp_path_factory: pytest.TempPathFactory):
    work: Path = tmp_path_factory.mktemp("content")
    return node_module("src/components/content.ts", RUNNER, work)


def test_raster_images_become_data_urls_and_documents_chips(parts_of):
    parts = parts_of(
        [image_block("iVBORw0KGgo="), image_block("R0lGOD==", "image/gif"), pdf_block(b"%PDF-")]
    )
    assert [(p["kind"], p["name"], p.get("src")) for p in parts] == [
        ("image", "image/png", "data:image/png;base64,iVBORw0KGgo="),
        ("image", "image/gif", "data:image/gif;base64,R0lGOD=="),
        ("document", "paper.pdf", None),
    ]


def test_hostile_images_get_no_source_only_a_reason(parts_of):
    parts = parts_of(
        [
            image_block("PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+", "image/svg+xml"),
            url_image("javascript:alert(1)"),
            url_image("https://tracker.example/pixel.png"),
            image_block('AAAA" onerror="alert(1)'),
            image_block("AAAA", "text/html"),
            {"type": "image", "source": {"type": "base64", "media_type": "image/png"}},
        ]
    )
    assert [(p.get("hidden"), p.get("src")) for p in parts] == [
        ("type", None),
        ("url", None),
        ("url", None),
        ("data", None),
        ("type", None),
        ("data", None),
    ]
    assert "javascript" not in str(parts) and "tracker.example" not in str(parts)


NAMED_RUNNER = """
import { partsOf } from './bundle.mjs';
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const { blocks, names } = JSON.parse(Buffer.concat(chunks).toString());
process.stdout.write(JSON.stringify(partsOf({ content: blocks }, names)));
"""


@pytest.fixture(scope="module")
def parts_named(tmp_path_factory: pytest.TempPathFactory):
    work: Path = tmp_path_factory.mktemp("content-named")
    return node_module("src/components/content.ts", NAMED_RUNNER, work)


def test_an_mcp_tool_call_shows_server_colon_tool_and_its_result_images_follow(parts_named):
    svg = image_block("PHN2Zz48L3N2Zz4=", "image/svg+xml")
    result = {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": [
            {"type": "text", "text": "Here it is"},
            image_block("iVBORw0KGgo="),
            svg,
            url_image("https://example.com/x.png"),
        ],
    }
    use = {"type": "tool_use", "id": "t1", "name": "everything__get-tiny-image", "input": {}}

    parts = parts_named(
        {
            "blocks": [use, result],
            "names": {"everything__get-tiny-image": "everything:get-tiny-image"},
        }
    )

    assert [(p["kind"], p["name"]) for p in parts] == [
        ("tool_use", "everything:get-tiny-image"),
        ("tool_result", ""),
        ("image", "image/png"),
        ("image", "image/svg+xml"),
        ("image", ""),
    ]
    assert parts[1]["text"] == "Here it is"
    assert parts[2]["src"] == "data:image/png;base64,iVBORw0KGgo="
    assert "src" not in parts[3] and parts[3]["hidden"] == "type"  # never an SVG
    assert "src" not in parts[4] and parts[4]["hidden"] == "url"  # never fetched
    plain = parts_named({"blocks": [use], "names": None})
    assert plain[0]["name"] == "everything__get-tiny-image"
