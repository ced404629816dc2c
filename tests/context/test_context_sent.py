"""A question assembled from its parts, and the record of what went in (context/sent.py)."""

from __future__ import annotations

from helpers.content_blocks import image_block

from jupyter_tree_chat.context import Converted, QuestionParts, Sent, sent_line, with_text
from jupyter_tree_chat.textview import (
    Chip,
    chip_text,
    question_as_typed,
    typed_pieces,
    typed_source,
)

IMAGE = image_block("AA==")


def test_a_question_of_text_only_stays_a_string():
    parts = QuestionParts()
    parts.text("  Explain ")
    parts.value(Converted(("42",), Sent("n", "int")))
    parts.text(" please  ")
    assert parts.content() == "Explain 42 please"
    assert parts.context() == [{"name": "n", "kind": "variable", "type": "int"}]


def test_an_image_stands_where_its_field_stood():
    parts = QuestionParts()
    parts.text("Compare ")
    parts.value(Converted((IMAGE,), Sent("fig", "PNG", "640×480")))
    parts.text(" with the table:")
    parts.value(Converted(("| a |\n|---|\n| 1 |",), Sent("df", "DataFrame"), paragraph=True))
    parts.text("   ")
    assert parts.content() == [
        {"type": "text", "text": "Compare "},
        IMAGE,
        {"type": "text", "text": " with the table:\n\n| a |\n|---|\n| 1 |"},
    ]


def test_files_and_quotes_lead_the_question_as_blocks_of_their_own():
    parts = QuestionParts()
    parts.lead(Converted(("File `a.py`:\n\n```py\nx = 1\n```\n",), Sent("a.py", "text")))
    parts.text("What does it do?")
    assert parts.content() == [
        {"type": "text", "text": "File `a.py`:\n\n```py\nx = 1\n```\n\n"},
        {"type": "text", "text": "What does it do?"},
    ]


def test_the_sent_line_says_what_each_thing_became():
    items = [
        Sent("df", "DataFrame", "1,000×12", "40 rows").to_meta(),
        Sent("fig", "PNG", "1200×800").to_meta(),
        Sent("photo.jpg", "JPEG", "4000×3000", "1568×1176", "attachment").to_meta(),
    ]
    assert sent_line(items) == (
        "sent: df (DataFrame 1,000×12 → 40 rows), fig (PNG 1200×800), "
        "photo.jpg (JPEG 4000×3000 → 1568×1176)"
    )
    assert sent_line([]) == ""
    assert sent_line(["not a mapping"]) == ""


def test_new_words_keep_the_images_and_documents_of_a_question():
    document = {"type": "document", "source": {}, "title": "a.pdf"}
    message = {"role": "user", "content": [{"type": "text", "text": "old"}, IMAGE, document]}
    assert with_text(message, "new") == [IMAGE, document, {"type": "text", "text": "new"}]
    assert with_text({"role": "user", "content": "old"}, "new") == "new"


def sent_text(content) -> str:
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def test_the_question_as_typed_keeps_a_chip_where_each_field_stood():
    parts = QuestionParts()
    parts.lead(
        Converted(
            ("File `a.py`:\n\n```py\nx = 1\n```\n",),
            Sent("a.py", "text", "6 chars", kind="attachment"),
        )
    )
    parts.text("  Is ")
    parts.value(Converted((IMAGE,), Sent("fig", "PNG", "640×480")))
    parts.text(" like ")
    parts.value(Converted(("| a |\n|---|\n| 1 |",), Sent("df", "DataFrame", "1×1"), paragraph=True))
    parts.text(" and {x}? ", typed=" and {{x}}? ")
    meta = parts.meta()
    message = {"role": "user", "content": parts.content()}
    assert typed_source(meta) == "Is {fig} like {df} and {{x}}?"
    assert question_as_typed(message, meta) == (
        "[a.py · text 6 chars] Is [fig · PNG 640×480] like [df · DataFrame 1×1] and {{x}}?"
    )
    chips = [p for p in typed_pieces(meta) or [] if isinstance(p, Chip)]
    assert [chip_text(c, message) for c in chips] == [
        "File `a.py`:\n\n```py\nx = 1\n```",
        None,  # the image block is what was sent
        "| a |\n|---|\n| 1 |",
    ]
    assert sent_text(message["content"]).endswith("| 1 |\n\n and {x}?")  # sent as before


def test_a_field_at_either_end_is_found_after_the_question_is_trimmed():
    parts = QuestionParts()
    parts.value(Converted(("  padded  ",), Sent("s", "str", "10 chars")))
    parts.text(" middle ")
    parts.value(Converted(("| t |",), Sent("t", "DataFrame"), paragraph=True))
    message = {"role": "user", "content": parts.content()}
    assert message["content"] == "padded   middle \n\n| t |"
    chips = [p for p in typed_pieces(parts.meta()) or [] if isinstance(p, Chip)]
    assert [chip_text(c, message) for c in chips] == ["padded  ", "| t |"]  # its start trimmed


def test_a_question_that_reads_as_sent_keeps_no_typed_text():
    parts = QuestionParts()
    parts.text("just words")
    assert parts.meta() == {}
    empty = QuestionParts()
    empty.text("a ")
    empty.value(Converted(("",), Sent("s", "str", "0 chars")))
    empty.text(" b")
    (chip,) = [p for p in typed_pieces(empty.meta()) or [] if isinstance(p, Chip)]
    assert chip.sent is None  # nothing of it was sent: the chip opens nothing
