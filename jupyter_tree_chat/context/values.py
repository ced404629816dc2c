"""A Python value as the model should see it, chosen by its type.

``str(value)`` is what a console prints, not what a reader needs: a DataFrame's repr
hides its columns, a figure's is ``<Figure size 640x480 with 1 Axes>``. So, by type:

    str                           as it is
    numbers                       str()
    pandas DataFrame / Series     a Markdown table rendered by pandas (first and last
                                  rows within the limits) and a line with the full shape
    numpy array                   numpy's summarised repr, with shape and dtype
    matplotlib Figure / Axes,     an image block (PNG), fitted to the API's limits
    PIL image, anything with
    _repr_png_ / _repr_jpeg_
    an SVG, an image by URL       refused in one line: nothing is rendered or fetched
    anything else                 _repr_markdown_, else repr, cut at ``max_chars``

pandas, numpy, matplotlib and Pillow are never imported here: a value can only be a
DataFrame if pandas is already loaded, so ``sys.modules`` is asked instead.
"""

from __future__ import annotations

import base64
import binascii
import io
import numbers
import sys
from collections.abc import Callable
from typing import Any, ClassVar

from ..errors import ContextRefused
from ..i18n import _
from .images import fit_image, svg_refusal
from .sent import Converted, Limits, Sent, cut

RASTER_MIMES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def convert_value(name: str, value: Any, limits: Limits) -> Converted:
    """What ``{name}`` becomes in the question; ``ContextRefused`` if it cannot go in."""
    if isinstance(value, str):
        return Converted((value,), Sent(name, "str", f"{len(value):,} chars"))
    if isinstance(value, numbers.Number) and not _is_array(value):
        return Converted((str(value),), Sent(name, type(value).__name__))
    try:
        reprs = _RichReprs(value)
        return (
            _frame(name, value, limits)
            or _array(name, value, limits)
            or _image(name, value, reprs)
            or _text_repr(name, value, limits, reprs)
        )
    except ContextRefused:
        raise
    except Exception as error:  # a value's own repr methods can fail in any way
        raise ContextRefused(
            _("{field} could not be turned into text or an image ({kind}: {error})").format(
                field="{" + name + "}", kind=type(error).__name__, error=error
            )
        ) from None


# -- pandas --------------------------------------------------------------------------------


def _frame(name: str, value: Any, limits: Limits) -> Converted | None:
    pandas = sys.modules.get("pandas")
    if pandas is None or not isinstance(value, (pandas.DataFrame, pandas.Series)):
        return None
    frame = value.to_frame() if isinstance(value, pandas.Series) else value
    rows, columns = frame.shape
    shown = _head_and_tail(frame, limits.max_rows, axis=0)
    shown = _head_and_tail(shown, limits.max_columns, axis=1)
    table = shown.to_markdown()  # pandas renders it, with tabulate (a dependency)
    cuts = [
        f"{shown_count:,} {noun}"
        for noun, shown_count, count in (
            ("rows", shown.shape[0], rows),
            ("columns", shown.shape[1], columns),
        )
        if shown_count < count
    ]
    shape = f"{rows:,} rows × {columns:,} columns"
    if cuts:  # "40 shown", or "40 rows and 20 columns shown"
        shape += f", {cuts[0].split()[0] if len(cuts) == 1 else ' and '.join(cuts)} shown"
    size = f"{rows:,}" if isinstance(value, pandas.Series) else f"{rows:,}×{columns:,}"
    sent = Sent(name, type(value).__name__, size, ", ".join(cuts) or "table")
    return Converted((f"{table}\n\n{shape}",), sent, paragraph=True)


def _head_and_tail(frame: Any, most: int, *, axis: int) -> Any:
    count = frame.shape[axis]
    if count <= most:
        return frame
    head = (most + 1) // 2
    keep = [*range(head), *range(count - (most - head), count)]
    return frame.iloc[keep] if axis == 0 else frame.iloc[:, keep]


# -- numpy ---------------------------------------------------------------------------------


def _is_array(value: Any) -> bool:
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, numpy.ndarray)


def _array(name: str, value: Any, limits: Limits) -> Converted | None:
    if not _is_array(value):
        return None
    numpy = sys.modules["numpy"]
    with numpy.printoptions(threshold=1000):  # numpy summarises past this many items
        text, note = cut(repr(value), limits.max_chars)
    shape = "×".join(f"{n:,}" for n in value.shape) or "scalar"
    summarised = value.size > 1000
    fenced = f"```\n{text}\n```{note}\n\nshape {value.shape}, dtype {value.dtype}"
    became = "summarised" if summarised else ("cut" if note else "")
    return Converted((fenced,), Sent(name, "ndarray", f"{shape} {value.dtype}", became), True)


# -- images --------------------------------------------------------------------------------


def _image(name: str, value: Any, reprs: _RichReprs) -> Converted | None:
    data = image_data(value, f"{{{name}}}", reprs)
    if data is None:
        return None
    fitted = fit_image(data, f"{{{name}}}")
    return Converted((fitted.block(),), Sent(name, *fitted.described()))


def image_data(value: Any, what: str, reprs: _RichReprs | None = None) -> bytes | None:
    """The raster bytes of an image value, or None if it is not one.

    Refuses (one line) an SVG or an image that is only a URL: nothing is fetched.
    """
    figure = _figure_of(value)
    if figure is not None:
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", bbox_inches="tight")
        return buffer.getvalue()
    pil = sys.modules.get("PIL.Image")
    if pil is not None and isinstance(value, pil.Image):
        buffer = io.BytesIO()
        keep_jpeg = value.format == "JPEG" and value.mode in ("RGB", "L")
        value.save(buffer, format="JPEG" if keep_jpeg else "PNG")
        return buffer.getvalue()
    reprs = reprs or _RichReprs(value)
    for mime in RASTER_MIMES:
        data = reprs.get(mime)
        if data is not None:
            return _as_bytes(data, what)
    if getattr(value, "url", None) and hasattr(value, "_repr_png_"):
        raise ContextRefused(
            _(
                "{what} is an image by URL, which is never fetched; download it and pass the "
                "bytes (Image(data=...)) or --attach the file"
            ).format(what=what)
        )
    if reprs.get("image/svg+xml") is not None:
        raise ContextRefused(svg_refusal(what))
    return None


def _figure_of(value: Any) -> Any:
    figure_module = sys.modules.get("matplotlib.figure")
    if figure_module is None:
        return None
    if isinstance(value, figure_module.Figure):
        return value
    axes_module = sys.modules.get("matplotlib.axes")
    if axes_module is not None and isinstance(value, axes_module.Axes):
        return value.figure
    return None


def _as_bytes(data: Any, what: str) -> bytes:
    if isinstance(data, bytes):
        return data
    try:
        return base64.b64decode(str(data), validate=True)
    except (binascii.Error, ValueError):
        why = _("{what}: its image data is neither bytes nor base64")
        raise ContextRefused(why.format(what=what)) from None


class _RichReprs:
    """An object's IPython rich representations, asked for one at a time, each once."""

    _METHODS: ClassVar[dict[str, str]] = {
        "image/png": "_repr_png_",
        "image/jpeg": "_repr_jpeg_",
        "image/svg+xml": "_repr_svg_",
        "text/markdown": "_repr_markdown_",
    }

    def __init__(self, value: Any) -> None:
        self.value = value
        self._bundle: dict[str, Any] | None = None

    def get(self, mime: str) -> Any:
        bundle = self._mimebundle()
        if mime in bundle:
            return bundle[mime]
        method: Callable[[], Any] | None = getattr(self.value, self._METHODS.get(mime, ""), None)
        if not callable(method) or isinstance(self.value, type):
            return None
        result = method()
        return result[0] if isinstance(result, tuple) else result

    def _mimebundle(self) -> dict[str, Any]:
        if self._bundle is None:
            self._bundle = {}
            method = getattr(self.value, "_repr_mimebundle_", None)
            if callable(method) and not isinstance(self.value, type):
                result = method(include=None, exclude=None)
                result = result[0] if isinstance(result, tuple) else result
                if isinstance(result, dict):
                    self._bundle = result
        return self._bundle


# -- everything else -------------------------------------------------------------------------


def _text_repr(name: str, value: Any, limits: Limits, reprs: _RichReprs) -> Converted:
    markdown = reprs.get("text/markdown")
    kind, text = ("Markdown", markdown) if isinstance(markdown, str) else ("repr", repr(value))
    kept, note = cut(text, limits.max_chars)
    became = f"{kind}, cut to {limits.max_chars:,}" if note else kind
    size = f"{len(text):,} chars"
    return Converted((kept + note,), Sent(name, type(value).__name__, size, became))
