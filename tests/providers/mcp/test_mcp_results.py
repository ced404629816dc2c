"""An MCP tool's result as ``tool_result`` content, built from the SDK's own result types."""

from __future__ import annotations

import base64
import io
import struct
import zlib

import mcp_types as types
from PIL import Image

from jupyter_tree_chat.providers.mcp.results import png_without_broken_chunks, result_content


def png(width: int = 3, height: int = 2) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), "red").save(buffer, "PNG")
    return buffer.getvalue()


def chunk(kind: bytes, data: bytes, *, damaged: bool = False) -> bytes:
    checksum = zlib.crc32(kind + data) ^ (1 if damaged else 0)
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", checksum)


def with_chunk(image: bytes, extra: bytes) -> bytes:
    """``image`` with ``extra`` put right after its IHDR chunk."""
    return image[:33] + extra + image[33:]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def result(*content, **fields) -> types.CallToolResult:
    return types.CallToolResult(content=list(content), **fields)


def test_text_is_text_and_is_error_is_kept():
    blocks, is_error = result_content(result(types.TextContent(text="no such file"), is_error=True))

    assert blocks == [{"type": "text", "text": "no such file"}]
    assert is_error is True


def test_a_raster_image_is_an_image_block_of_the_type_its_bytes_are():
    image = png()

    blocks, _ = result_content(
        result(types.ImageContent(data=b64(image), mime_type="image/jpeg"))  # the name lies
    )

    assert blocks == [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": b64(image)},
        }
    ]


def test_an_svg_or_broken_image_is_a_line_and_never_an_image_block():
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'

    blocks, _ = result_content(
        result(
            types.ImageContent(data=b64(svg), mime_type="image/svg+xml"),
            types.ImageContent(data="not base64!!", mime_type="image/png"),
        )
    )

    assert [b["type"] for b in blocks] == ["text", "text"]
    assert "image/svg+xml: not passed on; only PNG, JPEG, GIF and WebP" in blocks[0]["text"]
    assert "not base64" in blocks[1]["text"]
    assert "alert" not in str(blocks)


def test_a_png_with_a_damaged_ancillary_chunk_is_sent_without_it():
    damaged = with_chunk(png(), chunk(b"iCCP", b"profile\x00\x00junk", damaged=True))
    Image.open(io.BytesIO(png())).verify()

    cleaned = png_without_broken_chunks(damaged)

    assert cleaned == png()
    with Image.open(io.BytesIO(cleaned)) as opened:  # a strict decoder reads it
        assert opened.size == (3, 2)
    critical = with_chunk(png(), chunk(b"PLTE", b"\x00\x00\x00", damaged=True))
    assert png_without_broken_chunks(critical) is None
    blocks, _ = result_content(result(types.ImageContent(data=b64(critical), mime_type="x")))
    assert "a damaged PNG" in blocks[0]["text"]


def test_resources_and_links_are_text_with_their_uri():
    blocks, _ = result_content(
        result(
            types.EmbeddedResource(
                resource=types.TextResourceContents(uri="file:///a.txt", text="alpha")
            ),
            types.EmbeddedResource(
                resource=types.BlobResourceContents(
                    uri="file:///b.bin", mime_type="application/zip", blob=b64(b"\x00" * 30)
                )
            ),
            types.EmbeddedResource(
                resource=types.BlobResourceContents(
                    uri="file:///c.png", mime_type="image/png", blob=b64(png())
                )
            ),
            types.ResourceLink(
                uri="demo://r/1", name="Report", description="The report", mime_type="text/plain"
            ),
            types.AudioContent(data=b64(b"RIFF"), mime_type="audio/wav"),
        )
    )

    assert blocks[0] == {"type": "text", "text": "[resource file:///a.txt]\nalpha"}
    assert (
        blocks[1]["text"]
        == "[resource file:///b.bin (application/zip, about 30 bytes of binary data)]"
    )
    assert blocks[2]["type"] == "image"
    assert blocks[3]["text"] == "[resource link demo://r/1] Report The report (text/plain)"
    assert "audio/wav" in blocks[4]["text"] and "cannot take audio" in blocks[4]["text"]


def test_structured_content_is_json_text_unless_the_text_already_says_it():
    alone, _ = result_content(result(structured_content={"temperature": 21}))
    echoed, _ = result_content(
        result(
            types.TextContent(text='{"temperature": 21}'), structured_content={"temperature": 21}
        )
    )
    wrapped, _ = result_content(
        result(types.TextContent(text="hello"), structured_content={"content": "hello"})
    )

    assert alone == [{"type": "text", "text": '{"temperature": 21}'}]
    assert len(echoed) == 1 and len(wrapped) == 1


def test_text_over_max_chars_is_cut_with_a_note_and_images_stay():
    blocks, _ = result_content(
        result(
            types.TextContent(text="a" * 6),
            types.ImageContent(data=b64(png()), mime_type="image/png"),
            types.TextContent(text="b" * 6),
        ),
        max_chars=8,
    )

    assert [b["type"] for b in blocks] == ["text", "image", "text", "text"]
    assert blocks[0]["text"] == "aaaaaa" and blocks[2]["text"] == "bb"
    assert blocks[3]["text"].startswith("[cut: the result had 12 characters of text; 4 not sent")


def test_an_empty_result_says_so():
    assert result_content(result()) == (
        [{"type": "text", "text": "(the tool returned no content)"}],
        False,
    )
