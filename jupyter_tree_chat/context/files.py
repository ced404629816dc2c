"""A file attached to a question (``--attach PATH``) as the block the API takes for it.

What a file is comes from its bytes, not its name: ``%PDF-`` is a PDF and becomes a
``document`` block; PNG, JPEG, GIF and WebP become image blocks (fitted like any image);
UTF-8 text becomes a text block that names the file and fences its content. An SVG, or
bytes that are none of these, are refused in one line. The kernel reads the file (it
knows the notebook's folder); this module only decides what the bytes become.
"""

from __future__ import annotations

import base64
from pathlib import PurePath

from ..errors import ContextRefused
from ..i18n import _
from ..textview import fence
from .images import fit_image, looks_like_svg, megabytes, sniff, svg_refusal
from .sent import Converted, Limits, Sent, cut

#: the Messages API refuses a request over 32 MB; a PDF must fit in one
MAX_PDF_BYTES = 32 * 1024 * 1024
#: the largest file read at all (an image may be scaled down, so it may be larger)
MAX_FILE_BYTES = 50 * 1024 * 1024


def attachment(name: str, data: bytes, limits: Limits) -> Converted:
    """The block for the file ``name`` holding ``data``; ``ContextRefused`` if none fits."""
    if data.startswith(b"%PDF-"):
        return _pdf(name, data)
    if sniff(data) is not None:
        fitted = fit_image(data, name)
        kind, size, became = fitted.described()
        return Converted((fitted.block(),), Sent(name, kind, size, became, "attachment"))
    if looks_like_svg(data):
        raise ContextRefused(svg_refusal(name))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ContextRefused(
            _(
                "{name} is neither UTF-8 text, a PDF nor a PNG, JPEG, GIF or WebP image; "
                "convert it to one of those first"
            ).format(name=name)
        ) from None
    return _text(name, text, limits)


def _pdf(name: str, data: bytes) -> Converted:
    if len(data) > MAX_PDF_BYTES:
        raise ContextRefused(
            _(
                "{name} is {size}; the API takes PDFs up to {most} in one request: split it first"
            ).format(name=name, size=megabytes(len(data)), most=megabytes(MAX_PDF_BYTES))
        )

    block = {
        "type": "document",
        "source": {
            "type": "base64",
            "media_type": "application/pdf",
            "data": base64.b64encode(data).decode("ascii"),
        },
        "title": PurePath(name).name,
    }
    return Converted((block,), Sent(name, "PDF", megabytes(len(data)), "document", "attachment"))


def _text(name: str, text: str, limits: Limits) -> Converted:
    kept, note = cut(text, limits.max_chars)
    language = PurePath(name).suffix.lstrip(".").lower()
    body = f"File `{name}`:\n\n{fence(kept, language)}{note}"
    became = f"cut to {limits.max_chars:,} chars" if note else ""
    return Converted((body,), Sent(name, "text", f"{len(text):,} chars", became, "attachment"))
