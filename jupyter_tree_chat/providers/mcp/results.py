"""An MCP tool's result as the ``tool_result`` content the Messages API takes.

An MCP server answers a call with content blocks of its own kinds; the model reads
Anthropic's. Everything the server said is kept, in the form the API can carry:

    MCP                                   tool_result content
    text                                  text
    image (PNG, JPEG, GIF, WebP)          image block (base64), the type read from the bytes
    image of another type (SVG, ...)      a text line saying it was not passed on
    audio                                 a text line (the Messages API takes no audio)
    embedded resource, text               text headed by its URI
    embedded resource, binary             an image block if it is a raster image, else a line
    resource link                         a text line with its URI, name and description
    structuredContent                     JSON text (unless a text block already says it)
    isError                               ``is_error: true``

Text past ``max_chars`` (all text blocks together) is cut, with a note saying how much.
A result is untrusted input: nothing here renders it, and an image block is made only
from bytes that are a raster image (the browser shows images only as ``data:`` URLs of
raster types, through the sanitizer, like any other content).

The input is read by attribute (``.type``, ``.text``, ``.mime_type``, ...), as the
``mcp`` SDK's pydantic models have them, so this module needs no import of the SDK.
"""

from __future__ import annotations

import base64
import binascii
import json
import struct
import zlib
from typing import Any

from ...i18n import _

#: the image types the Messages API accepts, by the bytes that start each
_RASTER_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
#: the API's limit on one image block's base64 text
MAX_IMAGE_BASE64 = 5 * 1024 * 1024


def result_content(result: Any, max_chars: int | None = None) -> tuple[list[dict[str, Any]], bool]:
    """``(content blocks, is_error)`` of a ``CallToolResult`` (see the module docstring)."""
    blocks: list[dict[str, Any]] = []
    for item in getattr(result, "content", None) or []:
        blocks.extend(_converted(item))
    structured = getattr(result, "structured_content", None)
    if structured is not None and not _already_said(structured, blocks):
        blocks.append({"type": "text", "text": json.dumps(structured, ensure_ascii=False)})
    if max_chars is not None:
        blocks = _cut(blocks, max_chars)
    if not blocks:
        blocks = [{"type": "text", "text": _("(the tool returned no content)")}]
    return blocks, bool(getattr(result, "is_error", False))


def _converted(item: Any) -> list[dict[str, Any]]:
    kind = getattr(item, "type", None)
    if kind == "text":
        text = str(getattr(item, "text", ""))
        return [{"type": "text", "text": text}] if text else []
    if kind == "image":
        return [_image(getattr(item, "data", ""), getattr(item, "mime_type", None), None)]
    if kind == "audio":
        return [
            _line(
                _("[audio ({mime}): not passed on; the model cannot take audio]").format(
                    mime=getattr(item, "mime_type", "?")
                )
            )
        ]
    if kind == "resource":
        return [_resource(getattr(item, "resource", None))]
    if kind == "resource_link":
        return [_line(_link_text(item))]
    return [_line(_("[{kind} content from the server, not passed on]").format(kind=kind))]


def _image(data: Any, mime: Any, uri: str | None) -> dict[str, Any]:
    what = uri or _("an image")
    try:
        raw = base64.b64decode(str(data), validate=True)
    except (binascii.Error, ValueError):
        return _line(_("[{what}: its data is not base64; not passed on]").format(what=what))
    media_type = raster_type(raw)
    if media_type is None:
        return _line(
            _(
                "[{what} of type {mime}: not passed on; only PNG, JPEG, GIF and WebP images are]"
            ).format(what=what, mime=mime or "?")
        )
    if media_type == "image/png":
        cleaned = png_without_broken_chunks(raw)
        if cleaned is None:
            return _line(_("[{what}: a damaged PNG; not passed on]").format(what=what))
        raw = cleaned
    encoded = base64.b64encode(raw).decode("ascii")
    if len(encoded) > MAX_IMAGE_BASE64:
        return _line(
            _("[{what}: {size:,} bytes, over the 5 MB the API takes for an image]").format(
                what=what, size=len(raw)
            )
        )
    source = {"type": "base64", "media_type": media_type, "data": encoded}
    return {"type": "image", "source": source}


def raster_type(data: bytes) -> str | None:
    """The media type of raster image bytes the API takes, or None (SVG, anything else)."""
    for magic, media_type in _RASTER_MAGIC:
        if data.startswith(magic):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def png_without_broken_chunks(data: bytes) -> bytes | None:
    """A PNG with its damaged ancillary chunks left out, or None if a critical one is.

    A chunk whose checksum is wrong is refused by strict decoders (Pillow: "cannot
    identify image file") and skipped by lenient ones; server-everything's own tiny image
    has such an ``iCCP`` colour profile. An ancillary chunk (its type starts in lower case)
    carries nothing the picture needs, so leaving it out makes the image one every
    decoder reads the same way.
    """
    kept = [data[:8]]
    position = 8
    while position + 12 <= len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        end = position + 12 + length
        if end > len(data):
            return None
        kind = data[position + 4 : position + 8]
        (checksum,) = struct.unpack(">I", data[end - 4 : end])
        intact = zlib.crc32(data[position + 4 : end - 4]) == checksum
        if intact:
            kept.append(data[position:end])
        elif kind[:1].isupper():  # a critical chunk: the picture itself is damaged
            return None
        position = end
        if kind == b"IEND":
            break
    return b"".join(kept)


def _resource(resource: Any) -> dict[str, Any]:
    uri = str(getattr(resource, "uri", "?"))
    mime = getattr(resource, "mime_type", None)
    text = getattr(resource, "text", None)
    if isinstance(text, str):
        return {"type": "text", "text": f"[resource {uri}]\n{text}"}
    blob = getattr(resource, "blob", None)
    if isinstance(blob, str):
        image = _image(blob, mime, uri) if str(mime or "").startswith("image/") else None
        if image is not None and image["type"] == "image":
            return image
        size = (len(blob) * 3) // 4
        return _line(
            _("[resource {uri} ({mime}, about {size:,} bytes of binary data)]").format(
                uri=uri, mime=mime or "?", size=size
            )
        )
    return _line(f"[resource {uri}]")


def _link_text(item: Any) -> str:
    uri = str(getattr(item, "uri", "?"))
    parts = [f"[resource link {uri}]"]
    for attribute in ("name", "description"):
        value = getattr(item, attribute, None)
        if value:
            parts.append(str(value))
    mime = getattr(item, "mime_type", None)
    if mime:
        parts.append(f"({mime})")
    return " ".join(parts)


def _line(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _already_said(structured: Any, blocks: list[dict[str, Any]]) -> bool:
    """Whether the text blocks already say the structured content (servers are asked to
    send both): one of them is it as JSON, or each of its values is one of them
    (server-filesystem's ``{"content": TEXT}`` beside TEXT)."""
    said = [block["text"] for block in blocks if block.get("type") == "text"]
    for text in said:
        try:
            if json.loads(text) == structured:
                return True
        except ValueError:
            continue
    values = structured.values() if isinstance(structured, dict) else ()
    return bool(values) and all(isinstance(v, str) and v in said for v in values)


def _cut(blocks: list[dict[str, Any]], max_chars: int) -> list[dict[str, Any]]:
    total = sum(len(b["text"]) for b in blocks if b.get("type") == "text")
    if total <= max_chars:
        return blocks
    kept: list[dict[str, Any]] = []
    room = max_chars
    for block in blocks:
        if block.get("type") != "text":
            kept.append(block)
            continue
        if room <= 0:
            continue
        text = block["text"]
        kept.append({"type": "text", "text": text[:room]} if len(text) > room else block)
        room -= len(text)
    note = _(
        "[cut: the result had {total:,} characters of text; {left:,} not sent "
        "(TreeChat.max_chars is {limit:,})]"
    ).format(total=total, left=total - max_chars, limit=max_chars)
    kept.append(_line(note))
    return kept
