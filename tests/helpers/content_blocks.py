"""Image and document content blocks as the Messages API takes them, for tests."""

from __future__ import annotations

import base64
from typing import Any


def image_block(data: bytes | str, media_type: str = "image/png") -> dict[str, Any]:
    """A base64 image block; ``data`` as bytes (encoded here) or as the base64 text itself."""
    encoded = base64.b64encode(data).decode() if isinstance(data, bytes) else data
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": media_type, "data": encoded},
    }


def pdf_block(
    data: bytes, title: str = "paper.pdf", media_type: str = "application/pdf"
) -> dict[str, Any]:
    source = {"type": "base64", "media_type": media_type, "data": base64.b64encode(data).decode()}
    return {"type": "document", "source": source, "title": title}


def url_image(url: str) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "url", "url": url}}


def tiny_png(width: int = 2, height: int = 2) -> bytes:
    """A small real PNG (Pillow), for image blocks that must be valid images."""
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 40, 40)).save(out, format="PNG")
    return out.getvalue()


TINY_PDF = b"%PDF-1.4\n1 0 obj << /Type /Page >> endobj\n%%EOF\n"
