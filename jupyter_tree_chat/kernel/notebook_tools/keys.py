"""No key of any endpoint leaves the kernel through the notebook tools.

``run("import os; print(os.environ)")``, a variable holding a key, a cell that set one:
each would hand the model (and the session file, and every view) a secret. So every text
a notebook tool returns is searched for the values of the key variables this kernel
knows (Anthropic's, OpenAI's and every configured endpoint's ``key_env``), and each run
of the text that matches a piece of a key (a key cut in half still leaks) becomes
``[redacted]``. An image cannot be searched: the docs say so.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from ...providers.endpoints.config import Endpoint

#: key variables outside the endpoint table (the Messages API's own)
KEY_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY")
#: shorter values are not treated as keys (``LLAMA_API_KEY=x`` would redact every x)
MIN_KEY_CHARS = 8
#: a run of this many characters of a key counts as a piece of it (more than the
#: public prefixes: "sk-ant-api03-" alone is not a secret)
PIECE_CHARS = 16
REDACTED = "[redacted]"


def key_values(
    endpoints: Mapping[str, Endpoint], environ: Mapping[str, str] | None = None
) -> tuple[str, ...]:
    """The values of every key variable that is set, longest first."""
    environ = os.environ if environ is None else environ
    names = set(KEY_VARIABLES)
    for endpoint in endpoints.values():
        names.update(endpoint.key_env)
    found = {environ.get(name, "").strip() for name in names}
    return tuple(sorted((k for k in found if len(k) >= MIN_KEY_CHARS), key=len, reverse=True))


def redact(text: str, keys: Iterable[str]) -> str:
    """``text`` with every piece of a key (``PIECE_CHARS`` or more of it) redacted."""
    covered = bytearray(len(text))
    hit = False
    for key in keys:
        size = min(PIECE_CHARS, len(key))
        pieces = {key[i : i + size] for i in range(len(key) - size + 1)}
        for piece in pieces:
            at = text.find(piece)
            while at >= 0:
                covered[at : at + size] = b"\1" * size
                hit = True
                at = text.find(piece, at + 1)
    if not hit:
        return text
    kept: list[str] = []
    inside = False
    for char, marked in zip(text, covered, strict=True):
        if marked and not inside:
            kept.append(REDACTED)
        elif not marked:
            kept.append(char)
        inside = bool(marked)
    return "".join(kept)
