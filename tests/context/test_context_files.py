"""A file attached to a question (context/files.py): what its bytes become."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

from jupyter_tree_chat.context import Limits, attachment
from jupyter_tree_chat.errors import ContextRefused


def test_a_source_file_is_a_text_block_that_names_it_and_fences_it():
    source = "def f():\n    return '```'\n"
    converted = attachment("src/util.py", source.encode(), Limits())
    assert converted.parts == ("File `src/util.py`:\n\n````py\n" + source + "````\n",)
    assert converted.sent.summary() == "text 26 chars"
    assert converted.sent.kind == "attachment"


def test_a_long_text_file_is_cut_with_a_note():
    converted = attachment("log.txt", ("x" * 50).encode(), Limits(max_chars=20))
    (text,) = converted.parts
    assert (
        text
        == "File `log.txt`:\n\n```txt\n"
        + "x" * 20
        + "\n```\n\n… [cut: 30 of 50 characters not sent]"
    )
    assert converted.sent.summary() == "text 50 chars → cut to 20 chars"


def test_a_pdf_is_a_document_block_named_by_its_file():
    data = b"%PDF-1.4\n% a tiny pdf\n"
    (block,) = attachment("papers/a.pdf", data, Limits()).parts
    assert block == {
        "type": "document",
        "source": {
            "type": "base64",
            "media_type": "application/pdf",
            "data": base64.b64encode(data).decode(),
        },
        "title": "a.pdf",
    }


def test_an_image_file_is_an_image_block_whatever_its_name():
    buffer = io.BytesIO()
    Image.new("RGB", (64, 48)).save(buffer, format="JPEG")
    converted = attachment("photo.png", buffer.getvalue(), Limits())  # a misnamed JPEG
    (block,) = converted.parts
    assert block["source"]["media_type"] == "image/jpeg"
    assert converted.sent.summary() == "JPEG 64×48"


@pytest.mark.parametrize(
    ("name", "data", "says"),
    [
        ("logo.svg", b"<svg xmlns='http://www.w3.org/2000/svg'/>", "logo.svg is an SVG"),
        ("blob.bin", bytes(range(256)), "blob.bin is neither UTF-8 text, a PDF nor a PNG"),
        ("big.pdf", b"%PDF-" + bytes(33 * 1024 * 1024), "big.pdf is 33.0 MB; the API takes PDFs"),
    ],
)
def test_what_cannot_be_sent_is_refused_in_one_line(name, data, says):
    with pytest.raises(ContextRefused) as caught:
        attachment(name, data, Limits())
    assert str(caught.value).startswith(says) and "\n" not in str(caught.value)
