"""The offline model's phrase tables: every language says the same things."""

from __future__ import annotations

import re
from dataclasses import fields

from jupyter_tree_chat.providers.offline.phrases import PHRASES


def test_every_language_fills_the_same_templates_with_the_same_fields() -> None:
    english, chinese = PHRASES["en"], PHRASES["zh"]
    for field in fields(english):
        if field.name == "language":
            continue
        en, zh = getattr(english, field.name), getattr(chinese, field.name)
        assert zh and zh != en, field.name
        placeholders = set(re.findall(r"\{(\w+)\}", en))
        assert set(re.findall(r"\{(\w+)\}", zh)) <= placeholders, field.name
        assert en.format(**dict.fromkeys(placeholders, "x"))
    assert {english.language, chinese.language} == {"en", "zh"}
