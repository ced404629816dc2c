"""A Python value as a question carries it (context/values.py), chosen by its type.

Real pandas frames, numpy arrays, matplotlib figures, PIL and IPython images; the
tables are read back cell by cell, the images decoded with Pillow.
"""

from __future__ import annotations

import base64
import io
import subprocess
import sys

import matplotlib
import numpy as np
import pandas as pd
import pytest
from IPython.display import SVG
from IPython.display import Image as IPythonImage
from PIL import Image

from jupyter_tree_chat.context import Limits, convert_value
from jupyter_tree_chat.errors import ContextRefused

matplotlib.use("Agg")
from matplotlib.figure import Figure

LIMITS = Limits()


def table_rows(markdown: str) -> list[list[str]]:
    """The cells of a Markdown table (header first, the --- line left out)."""
    lines = [line for line in markdown.splitlines() if line.startswith("|")]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]
    return [row for row in rows if not set("".join(row)) <= set("-:")]


def png_bytes(width: int, height: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), "navy").save(buffer, format="PNG")
    return buffer.getvalue()


def sent_image(converted) -> Image.Image:
    (block,) = converted.parts
    assert block["type"] == "image" and block["source"]["type"] == "base64"
    image = Image.open(io.BytesIO(base64.b64decode(block["source"]["data"])))
    image.load()
    assert block["source"]["media_type"] == Image.MIME[image.format]
    return image


# -- text and numbers ---------------------------------------------------------------------


def test_a_string_goes_in_as_it_is_however_long():
    text = "line one\n{not a field}\n" + "x" * 30_000
    converted = convert_value("notes", text, LIMITS)
    assert converted.parts == (text,)
    assert converted.sent.summary() == "str 30,023 chars"


def test_numbers_read_as_numbers():
    assert convert_value("n", 3, LIMITS).parts == ("3",)
    assert convert_value("x", np.float64(1.5), LIMITS).parts == ("1.5",)


# -- pandas ---------------------------------------------------------------------------------


def test_a_dataframe_is_a_markdown_table_of_its_first_and_last_rows():
    frame = pd.DataFrame(
        {f"c{j}": [i * 100 + j for i in range(1000)] for j in range(12)},
    )
    converted = convert_value("df", frame, LIMITS)
    (text,) = converted.parts
    rows = table_rows(text)
    assert rows[0] == ["", *[f"c{j}" for j in range(12)]]
    body = rows[1:]
    assert len(body) == 40
    assert [row[0] for row in body] == [str(i) for i in [*range(20), *range(980, 1000)]]
    assert body[0][1:] == [str(j) for j in range(12)]
    assert body[-1][1:] == [str(99_900 + j) for j in range(12)]
    assert text.endswith("\n\n1,000 rows × 12 columns, 40 shown")
    assert converted.paragraph
    assert converted.sent.summary() == "DataFrame 1,000×12 → 40 rows"


def test_columns_past_max_columns_are_cut_from_the_middle():
    frame = pd.DataFrame([[f"r{i}c{j}" for j in range(30)] for i in range(50)])
    converted = convert_value("wide", frame, Limits(max_rows=10, max_columns=4))
    (text,) = converted.parts
    rows = table_rows(text)
    assert rows[0] == ["", "0", "1", "28", "29"]
    assert rows[1] == ["0", "r0c0", "r0c1", "r0c28", "r0c29"]
    assert [row[0] for row in rows[1:]] == ["0", "1", "2", "3", "4", "45", "46", "47", "48", "49"]
    assert text.endswith("50 rows × 30 columns, 10 rows and 4 columns shown")
    assert converted.sent.summary() == "DataFrame 50×30 → 10 rows, 4 columns"


def test_a_small_frame_and_a_series_are_whole_tables():
    frame = pd.DataFrame({"city": ["Oslo", "Lima"], "t": [3.5, 19.0]})
    converted = convert_value("small", frame, LIMITS)
    assert table_rows(converted.parts[0]) == [
        ["", "city", "t"],
        ["0", "Oslo", "3.5"],
        ["1", "Lima", "19"],
    ]
    assert converted.parts[0].endswith("2 rows × 2 columns")
    assert converted.sent.summary() == "DataFrame 2×2 → table"
    series = convert_value("s", pd.Series(range(100), name="n"), Limits(max_rows=4))
    assert table_rows(series.parts[0]) == [
        ["", "n"],
        ["0", "0"],
        ["1", "1"],
        ["98", "98"],
        ["99", "99"],
    ]
    assert series.sent.summary() == "Series 100 → 4 rows"


# -- numpy -----------------------------------------------------------------------------------


def test_an_array_is_numpys_summary_with_shape_and_dtype():
    array = np.arange(3000, dtype=np.int32).reshape(1000, 3)
    converted = convert_value("a", array, LIMITS)
    (text,) = converted.parts
    with np.printoptions(threshold=1000):
        assert repr(array) in text
    assert "...," in text and "2999" in text and "1500" not in text
    assert text.endswith("shape (1000, 3), dtype int32")
    assert converted.sent.summary() == "ndarray 1,000×3 int32 → summarised"
    small = convert_value("b", np.array([1.5, 2.5]), LIMITS)
    assert "array([1.5, 2.5])" in small.parts[0]
    assert small.sent.summary() == "ndarray 2 float64"


# -- images -----------------------------------------------------------------------------------


def test_a_matplotlib_figure_and_its_axes_are_png_image_blocks():
    figure = Figure(figsize=(4, 3), dpi=100)
    axes = figure.add_subplot()
    axes.plot([1, 3, 2])
    image = sent_image(convert_value("fig", figure, LIMITS))
    assert image.format == "PNG"
    assert 300 <= image.width <= 400 and 220 <= image.height <= 300  # tight bounding box
    assert sent_image(convert_value("ax", axes, LIMITS)).size == image.size
    assert (
        convert_value("fig", figure, LIMITS).sent.summary() == f"PNG {image.width}×{image.height}"
    )


def test_a_large_figure_is_scaled_to_the_api_limit():
    figure = Figure(figsize=(30, 20), dpi=100)
    figure.add_subplot().plot([1, 2])
    converted = convert_value("big", figure, LIMITS)
    assert max(sent_image(converted).size) == 1568
    assert converted.sent.became.endswith("×1568") or converted.sent.became.startswith("1568×")


def test_pil_images_keep_jpeg_and_otherwise_go_as_png():
    photo = Image.open(io.BytesIO(_jpeg(640, 480)))
    assert sent_image(convert_value("photo", photo, LIMITS)).format == "JPEG"
    drawing = Image.new("RGBA", (50, 40), (255, 0, 0, 128))
    image = sent_image(convert_value("drawing", drawing, LIMITS))
    assert (image.format, image.size, image.mode) == ("PNG", (50, 40), "RGBA")


def test_ipython_images_and_objects_with_repr_png_are_image_blocks():
    data = png_bytes(120, 90)
    assert sent_image(convert_value("img", IPythonImage(data=data), LIMITS)).size == (120, 90)
    assert sent_image(convert_value("gif", IPythonImage(data=_gif(30, 20)), LIMITS)).format == "GIF"

    class Chart:
        def _repr_png_(self) -> bytes:
            return data

    assert sent_image(convert_value("chart", Chart(), LIMITS)).size == (120, 90)


def test_an_image_by_url_is_refused_and_nothing_is_fetched():
    for url in ("https://example.invalid/cat.png", "javascript:alert(1)"):
        with pytest.raises(ContextRefused) as caught:
            convert_value("img", IPythonImage(url=url), LIMITS)
        assert str(caught.value).startswith("{img} is an image by URL, which is never fetched")
        assert url not in str(caught.value)


def test_an_svg_object_is_refused_in_one_line():
    svg = SVG('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')
    with pytest.raises(ContextRefused, match=r"^\{logo\} is an SVG, which is not sent"):
        convert_value("logo", svg, LIMITS)


# -- everything else ----------------------------------------------------------------------------


def test_other_objects_use_repr_markdown_or_repr_cut_with_a_note():
    class Report:
        def _repr_markdown_(self) -> str:
            return "# Report\n\n*fine*"

    converted = convert_value("r", Report(), LIMITS)
    assert converted.parts == ("# Report\n\n*fine*",)
    assert converted.sent.summary() == "Report 16 chars → Markdown"

    values = list(range(10_000))
    cut = convert_value("values", values, Limits(max_chars=100))
    (text,) = cut.parts
    assert text.startswith(repr(values)[:100])
    assert text.endswith(
        f"… [cut: {len(repr(values)) - 100:,} of {len(repr(values)):,} characters not sent]"
    )
    assert cut.sent.summary() == f"list {len(repr(values)):,} chars → repr, cut to 100"


def test_a_repr_that_fails_is_one_line():
    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("no repr today")

    with pytest.raises(ContextRefused) as caught:
        convert_value("b", Broken(), LIMITS)
    assert str(caught.value) == (
        "{b} could not be turned into text or an image (RuntimeError: no repr today)"
    )


def test_importing_the_package_loads_no_optional_library():
    code = (
        "import sys, jupyter_tree_chat.context, jupyter_tree_chat.kernel.magics\n"
        "optional = ('pandas', 'numpy', 'PIL', 'matplotlib', 'tabulate')\n"
        "print(sorted(m for m in optional if m in sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip() == "[]"


def _jpeg(width: int, height: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), "olive").save(buffer, format="JPEG")
    return buffer.getvalue()


def _gif(width: int, height: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("P", (width, height)).save(buffer, format="GIF")
    return buffer.getvalue()
