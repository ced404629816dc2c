"""Images for a question (context/images.py): recognised by their bytes, fitted to the API.

Every image here is made by Pillow, so each size and format is a real file; "without
Pillow" is a real import failure (``sys.modules["PIL"] = None``), as on a machine that
lacks it.
"""

from __future__ import annotations

import base64
import io
import os
import struct
import sys
import zlib

import pytest
from PIL import Image

from jupyter_tree_chat.context.images import (
    MAX_BASE64_BYTES,
    MAX_LONG_SIDE,
    fit_image,
    raster_size,
    sniff,
)
from jupyter_tree_chat.errors import ContextRefused

FORMATS = [("PNG", "PNG"), ("JPEG", "JPEG"), ("GIF", "GIF"), ("WEBP", "WebP")]


def encoded(width: int, height: int, pil_format: str = "PNG", mode: str = "RGB") -> bytes:
    buffer = io.BytesIO()
    Image.new(mode, (width, height), "teal").save(buffer, format=pil_format)
    return buffer.getvalue()


def noise_png(width: int, height: int) -> bytes:
    buffer = io.BytesIO()
    Image.frombytes("RGB", (width, height), os.urandom(width * height * 3)).save(buffer, "PNG")
    return buffer.getvalue()


def decoded(block: dict) -> Image.Image:
    image = Image.open(io.BytesIO(base64.b64decode(block["source"]["data"])))
    image.load()
    return image


@pytest.mark.parametrize(("pil_format", "name"), FORMATS)
def test_each_format_is_known_by_its_bytes_and_measured_without_decoding(pil_format, name):
    data = encoded(321, 123, pil_format)
    assert sniff(data) == name
    assert raster_size(data, name) == (321, 123)


def test_a_webp_with_alpha_is_measured_too():
    data = encoded(77, 45, "WEBP", "RGBA")
    assert raster_size(data, "WebP") == (77, 45)


def test_what_is_not_a_raster_image_is_not_one():
    assert sniff(b"<svg xmlns='http://www.w3.org/2000/svg'/>") is None
    assert sniff(b"%PDF-1.7") is None
    assert sniff(b"") is None


@pytest.mark.parametrize(("pil_format", "name"), FORMATS)
def test_an_image_that_fits_is_sent_byte_for_byte(pil_format, name):
    data = encoded(400, 300, pil_format)
    fitted = fit_image(data, "{img}")
    block = fitted.block()
    assert block["source"]["media_type"] == {"WebP": "image/webp"}.get(
        name, f"image/{name.lower()}"
    )
    assert base64.b64decode(block["source"]["data"]) == data
    assert fitted.described() == (name, "400×300", "")


def test_a_large_image_is_scaled_to_1568_on_its_long_side():
    fitted = fit_image(encoded(4000, 3000, "JPEG"), "photo.jpg")
    image = decoded(fitted.block())
    assert image.size == (MAX_LONG_SIDE, 1176)
    assert image.format == "JPEG"
    assert fitted.described() == ("JPEG", "4000×3000", "1568×1176")


def test_a_png_too_big_in_bytes_becomes_a_jpeg_under_5_mb():
    data = noise_png(1500, 1500)  # incompressible: about 6.7 MB as PNG
    assert len(data) * 4 / 3 > MAX_BASE64_BYTES
    fitted = fit_image(data, "{noise}")
    block = fitted.block()
    assert len(block["source"]["data"]) <= MAX_BASE64_BYTES
    assert block["source"]["media_type"] == "image/jpeg"
    assert decoded(block).size == (1500, 1500)
    assert fitted.described() == ("PNG", "1500×1500", "JPEG")


def test_without_pillow_a_large_image_is_one_line_saying_how_to_get_it(monkeypatch):
    large, small = encoded(3000, 2000), encoded(100, 80)
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(ContextRefused) as caught:
        fit_image(large, "{fig}")
    assert str(caught.value) == (
        "{fig} is 3000×2000 (the API takes at most 1568 px on the long side); "
        "install Pillow (pip install pillow) to have it scaled down"
    )
    assert base64.b64decode(fit_image(small, "{fig}").block()["source"]["data"]) == small


def test_an_svg_is_refused_and_never_rendered():
    with pytest.raises(ContextRefused, match=r"^logo.svg is an SVG, which is not sent"):
        fit_image(b'<?xml version="1.0"?>\n<svg onload="alert(1)"></svg>', "logo.svg")


def test_a_100_mb_image_is_refused_before_it_is_read():
    huge = encoded(10, 10) + bytes(100 * 1024 * 1024)
    with pytest.raises(ContextRefused) as caught:
        fit_image(huge, "{big}")
    assert str(caught.value) == (
        "{big} is 100.0 MB; images over 50.0 MB are not read: make a smaller copy first"
    )


def test_a_decompression_bomb_is_refused_from_its_header():
    header = struct.pack(">IIBBBBB", 30000, 30000, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + header
    bomb = (
        b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + chunk + struct.pack(">I", zlib.crc32(chunk))
    )
    with pytest.raises(ContextRefused, match=r"30000×30000 pixels; images over 50 megapixels"):
        fit_image(bomb, "{bomb}")


def test_damaged_or_unknown_bytes_are_one_line():
    with pytest.raises(ContextRefused, match="is not a PNG, JPEG, GIF or WebP image"):
        fit_image(b"BM\x00\x00 a bitmap", "{bmp}")
    with pytest.raises(ContextRefused, match="is a damaged JPEG image"):
        fit_image(b"\xff\xd8\xff\xe0\x00\x10JFIF", "{cut}")
