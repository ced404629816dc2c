"""Keys found in a notebook tool's result are redacted, whole or in pieces
(kernel/notebook_tools/keys.py), from every key variable the kernel knows."""

from __future__ import annotations

from jupyter_tree_chat.kernel.notebook_tools.keys import key_values, redact
from jupyter_tree_chat.providers.endpoints.entries import endpoint_table

KEY = "sk-ant-api03-SENTINEL-9f8e7d6c5b4a-DO-NOT-LEAK-0123456789abcdef"


def test_a_whole_key_and_its_pieces_become_redacted() -> None:
    text = f"key={KEY}; head={KEY[:20]}; tail={KEY[-16:]}; fine=sk-ant-api03"
    assert redact(text, [KEY]) == (
        "key=[redacted]; head=[redacted]; tail=[redacted]; fine=sk-ant-api03"
    )


def test_overlapping_and_adjacent_pieces_are_one_redaction() -> None:
    assert redact(KEY + KEY, [KEY]) == "[redacted]"
    assert redact(f"a{KEY[5:40]}b", [KEY]) == "a[redacted]b"


def test_text_without_a_key_is_unchanged() -> None:
    text = "no secrets here, only sk-ant and SENTINEL words"
    assert redact(text, [KEY]) == text
    assert redact(text, []) == text


def test_the_keys_are_every_endpoints_key_variable_that_is_set() -> None:
    environ = {
        "ANTHROPIC_API_KEY": KEY,
        "LLAMA_API_KEY": "llama-key-123456",
        "DEEPSEEK_API_KEY": "short",  # under 8 characters: not treated as a key
        "UNRELATED": "not-a-key-at-all",
    }
    keys = key_values(endpoint_table(), environ)
    assert keys == (KEY, "llama-key-123456")
    custom = endpoint_table({"lab": {"base_url": "http://lab.test/v1", "key_env": "LAB_KEY"}})
    assert key_values(custom, {"LAB_KEY": "lab-secret-value"}) == ("lab-secret-value",)
