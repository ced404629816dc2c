"""Images for a question: raster bytes recognised, measured and fitted to the API's limits.

The Messages API takes PNG, JPEG, GIF and WebP as base64 image blocks, at most 5 MB each
(counted on the base64 text) and 8000 px a side; past 1568 px on the long side it scales
the image down itself, spending time on detail it throws away. So an image is fitted
here: with Pillow installed it is scaled to 1568 px and re-encoded until it fits; without
Pillow, one that does not fit is refused in one line that says how to get it.

Nothing here fetches, renders or trusts a name: the type comes from the bytes themselves,
an SVG (a program, not a picture) is refused, and a source over ``MAX_SOURCE_BYTES`` or
``MAX_SOURCE_PIXELS`` is refused before anything is decoded.
"""

from __future__ import annotations

import base64
import io
import struct
from dataclasses import dataclass
from typing import Any

from ..errors import ContextRefused
from ..i18n import _

#: what the API accepts in an image block, by the name this module gives each format
MEDIA_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WebP": "image/webp"}
FORMAT_OF = {media: name for name, media in MEDIA_TYPES.items()}
MAX_LONG_SIDE = 1568
MAX_BASE64_BYTES = 5 * 1024 * 1024
MAX_SIDE = 8000
MAX_SOURCE_BYTES = 50 * 1024 * 1024
MAX_SOURCE_PIXELS = 50_000_000


@dataclass(frozen=True)
class FittedImage:
    """An image ready to send, and the size it had before fitting."""

    data: bytes
    media_type: str
    width: int
    height: int
    source_width: int
    source_height: int
    source_format: str

    @property
    def format(self) -> str:
        return FORMAT_OF[self.media_type]

    def block(self) -> dict[str, Any]:
        """The image content block, as the Messages API takes it."""
        return {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": self.media_type,
                "data": base64.b64encode(self.data).decode("ascii"),
            },
        }

    def described(self) -> tuple[str, str, str]:
        """(type, size, became) for the ``sent:`` line: ``PNG 3000×2000 → 1568×1045``."""
        size = f"{self.source_width}×{self.source_height}"
        if (self.width, self.height) == (self.source_width, self.source_height):
            became = "" if self.format == self.source_format else self.format
        else:
            new = f"{self.width}×{self.height}"
            became = new if self.format == self.source_format else f"{self.format} {new}"
        return self.source_format, size, became


def base64_length(size: int) -> int:
    return 4 * ((size + 2) // 3)


def sniff(data: bytes) -> str | None:
    """The raster format the bytes are (``"PNG"``, ``"JPEG"``, ...), or None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "PNG"
    if data.startswith(b"\xff\xd8\xff"):
        return "JPEG"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "GIF"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WebP"
    return None


def looks_like_svg(data: bytes) -> bool:
    head = data[:1024].lstrip().lower()
    return head.startswith((b"<svg", b"<?xml")) and b"<svg" in head


def raster_size(data: bytes, kind: str) -> tuple[int, int] | None:
    """Width and height read from the format's header (no decoding, no Pillow)."""
    try:
        if kind == "PNG":
            return struct.unpack(">II", data[16:24])
        if kind == "GIF":
            return struct.unpack("<HH", data[6:10])
        if kind == "WebP":
            return _webp_size(data)
        if kind == "JPEG":
            return _jpeg_size(data)
    except struct.error:
        return None
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L":
        b0, b1, b2, b3 = data[21:25]
        return 1 + (b0 | (b1 & 0x3F) << 8), 1 + (b1 >> 6 | b2 << 2 | (b3 & 0x0F) << 10)
    if chunk == b"VP8X":
        return 1 + int.from_bytes(data[24:27], "little"), 1 + int.from_bytes(data[27:30], "little")
    return None


_JPEG_FRAMES = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    at = 2
    while at + 9 < len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in _JPEG_FRAMES:
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return width, height
        if 0xD0 <= marker <= 0xD9 or marker == 0x01:  # markers without a length
            at += 2
            continue
        at += 2 + struct.unpack(">H", data[at + 2 : at + 4])[0]
    return None


def fit_image(data: bytes, what: str) -> FittedImage:
    """``data`` as an image the API takes, scaled with Pillow if it must be.

    ``what`` names the image in the one-line refusal (``"{fig}"``, ``"photo.png"``).
    """
    if len(data) > MAX_SOURCE_BYTES:
        raise ContextRefused(
            _(
                "{what} is {size}; images over {most} are not read: make a smaller copy first"
            ).format(what=what, size=megabytes(len(data)), most=megabytes(MAX_SOURCE_BYTES))
        )
    kind = sniff(data)
    if kind is None:
        if looks_like_svg(data):
            raise ContextRefused(svg_refusal(what))
        raise ContextRefused(
            _(
                "{what} is not a PNG, JPEG, GIF or WebP image (the kinds the API takes); "
                "save it as PNG first"
            ).format(what=what)
        )
    size = raster_size(data, kind)
    if size is None:
        why = _("{what} is a damaged {kind} image (its size cannot be read)")
        raise ContextRefused(why.format(what=what, kind=kind))
    width, height = size
    if width * height > MAX_SOURCE_PIXELS:
        raise ContextRefused(
            _(
                "{what} is {width}×{height} pixels; images over {most} megapixels are not "
                "decoded: make a smaller copy"
            ).format(what=what, width=width, height=height, most=MAX_SOURCE_PIXELS // 1_000_000)
        )
    fits = max(width, height) <= MAX_LONG_SIDE and base64_length(len(data)) <= MAX_BASE64_BYTES
    if fits:
        return FittedImage(data, MEDIA_TYPES[kind], width, height, width, height, kind)
    return _scaled(data, kind, width, height, what)


def _scaled(data: bytes, kind: str, width: int, height: int, what: str) -> FittedImage:
    try:
        from PIL import Image
    except ImportError:
        if max(width, height) > MAX_LONG_SIDE:
            why = _(
                "{what} is {width}×{height} (the API takes at most {most} px on the long side); "
                "install Pillow (pip install pillow) to have it scaled down"
            ).format(what=what, width=width, height=height, most=MAX_LONG_SIDE)
        else:
            why = _(
                "{what} is {size} (the API takes at most 5 MB); "
                "install Pillow (pip install pillow) to have it scaled down"
            ).format(what=what, size=megabytes(len(data)))
        raise ContextRefused(why) from None
    try:
        with Image.open(io.BytesIO(data)) as opened:
            opened.draft("RGB", (MAX_LONG_SIDE, MAX_LONG_SIDE))  # JPEG: decode smaller
            image = opened.copy()
    except Exception as error:  # Pillow raises many kinds for damaged files
        why = _("{what} cannot be decoded as {kind} ({error})")
        raise ContextRefused(why.format(what=what, kind=kind, error=error)) from None
    image.thumbnail((MAX_LONG_SIDE, MAX_LONG_SIDE))
    encoded, media_type = encode_fitting(image, prefer_jpeg=kind == "JPEG")
    if encoded is None:
        raise ContextRefused(
            _(
                "{what} is still over 5 MB after scaling to {width}×{height}; make a smaller copy"
            ).format(what=what, width=image.width, height=image.height)
        )
    return FittedImage(encoded, media_type, image.width, image.height, width, height, kind)


def encode_fitting(image: Any, *, prefer_jpeg: bool) -> tuple[bytes | None, str]:
    """A Pillow image encoded within the 5 MB limit: PNG (or JPEG for photos), then JPEG."""
    attempts: list[tuple[str, dict[str, Any]]] = [] if prefer_jpeg else [("PNG", {})]
    attempts += [("JPEG", {"quality": 85}), ("JPEG", {"quality": 60})]
    for name, options in attempts:
        frame = image
        if name == "JPEG" and image.mode not in ("RGB", "L"):
            frame = image.convert("RGB")
        buffer = io.BytesIO()
        frame.save(buffer, format=name, **options)
        if base64_length(buffer.tell()) <= MAX_BASE64_BYTES:
            return buffer.getvalue(), MEDIA_TYPES[name]
    return None, MEDIA_TYPES["JPEG"]


def svg_refusal(what: str) -> str:
    return _(
        "{what} is an SVG, which is not sent (the API takes PNG, JPEG, GIF or WebP); "
        "render it to PNG first"
    ).format(what=what)


def megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB"
