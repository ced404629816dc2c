"""A branch as a notebook: one ``%%chat`` cell a question, its answer as the output.

Opened in JupyterLab it reads as the conversation: a Markdown cell saying where it came
from, a setup cell, then for each question on the branch a ``%%chat`` cell holding its
text, with the answer below as the cell's output (Markdown, its images, a footer line),
the model's thinking, tool calls and tool results as folded sections.

Run beside its session file, it continues that session. The setup cell loads the
extension, points ``TreeChat.session_file`` at the file and makes the branch current;
each ``%%chat`` cell carries the id of the notebook cell that first asked its question
(``meta.cell_id``), or, for a question asked elsewhere (the panel, ``%chat edit``, an
import), the question's node id, which the notebook-native rule takes for the same
thing (conversation/cellrule.py). So re-running cell 3 unchanged is a retry of question
3, with changed text a fork there, and a new cell at the end continues the branch.

Pure: a dict in nbformat 4.5 (``nbformat.validate`` accepts it); the caller writes it.
"""

from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..history.store import SESSION_SUFFIX
from ..history.tree import Node, SessionTree, is_real_user_message, message_text
from ..i18n import _
from ..measures.models import PRICES, Price
from ..measures.usage import dollars, node_cost
from ..textview import experiment_markdown
from .naming import question_source

NOTEBOOK_SUFFIX = ".ipynb"
#: what nbformat 4.5 allows as a cell id
_CELL_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_RASTER = ("image/png", "image/jpeg", "image/gif", "image/webp")
SETUP_CELL_ID = "tree-chat-setup"
ABOUT_CELL_ID = "tree-chat-about"


def notebook_path(session_file: str | os.PathLike[str], leaf: str) -> Path:
    """Where a branch's notebook goes by default: beside the session, named by its
    leaf, ``analysis.chat.jsonl`` → ``analysis.branch-3f2a9c1.ipynb``."""
    path = Path(session_file)
    name = path.name
    for suffix in (SESSION_SUFFIX, ".jsonl", ".json"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
            break
    short = re.sub(r"[^\w-]+", "-", leaf[:7]).strip("-") or "leaf"
    return path.with_name(f"{name}.branch-{short}{NOTEBOOK_SUFFIX}")


def branch_notebook(
    tree: SessionTree,
    leaf: str,
    *,
    session_file: str,
    labels: Mapping[str, str] | None = None,
    prices: Mapping[str, Price] | None = None,
    imported_from: str | None = None,
) -> dict[str, Any]:
    """The branch ending at ``leaf`` as a notebook bound to ``session_file`` (a name
    beside the notebook). ``imported_from`` names another tool's file the branch was
    read from: the notebook then continues the session that importing it writes."""
    path = tree.path_nodes(leaf)
    turns = _turns(path)
    used: set[str] = {SETUP_CELL_ID, ABOUT_CELL_ID}
    cells = [
        _markdown_cell(ABOUT_CELL_ID, _about(tree, path, session_file, turns, imported_from)),
        _code_cell(
            SETUP_CELL_ID,
            "%load_ext jupyter_tree_chat\n"
            f"%config TreeChat.session_file = {json.dumps(session_file, ensure_ascii=False)}\n"
            f"%chat switch {leaf}",
        ),
    ]
    for question, replies in turns:
        cell_id = _cell_id(question, used)
        used.add(cell_id)
        table = experiment_markdown(tree, question)  # a row of an experiment: all its rows
        if table is not None:
            cells.append(_markdown_cell(_cell_id_for(f"{cell_id}-experiment", used), table))
        cells.append(
            _code_cell(
                cell_id,
                _chat_source(question),
                _outputs(tree, question, replies, labels or {}, prices or PRICES),
            )
        )
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
            "jupyter_tree_chat": {"session_file": session_file, "leaf": leaf},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def _turns(path: list[Node]) -> list[tuple[Node, list[Node]]]:
    """Each question of the path with what followed it (answers, tool rounds)."""
    turns: list[tuple[Node, list[Node]]] = []
    for node in path:
        if is_real_user_message(node.message):
            turns.append((node, []))
        elif turns:
            turns[-1][1].append(node)
    return turns


def _about(
    tree: SessionTree,
    path: list[Node],
    session_file: str,
    turns: list[tuple[Node, list[Node]]],
    imported_from: str | None,
) -> str:
    leaf = path[-1].id
    lines = [
        _("# A branch of {file}").format(file=session_file),
        "",
        _(
            "The branch that ends at `{leaf}`: {questions} question(s), {nodes} message(s) "
            "of the session's {total}, exported by jupyter-tree-chat."
        ).format(leaf=leaf, questions=len(turns), nodes=len(path), total=len(tree)),
        "",
    ]
    if imported_from is not None:
        lines.append(
            _(
                "It was read from `{source}`. To continue it, import that file first: "
                "`jupyter tree-chat import {source} -o {file}`, then run the cells below."
            ).format(source=imported_from, file=session_file)
        )
    else:
        lines.append(
            _(
                "Run it with `{file}` beside it and each cell continues that session: run a "
                "cell again for another answer, change its text to fork there, add a cell "
                "at the end to go on. The other branches stay in the file."
            ).format(file=session_file)
        )
    return "\n".join(lines)


def _cell_id(question: Node, used: set[str]) -> str:
    """The question's own cell id, else its node id (cellrule.py binds both), else a new one."""
    recorded = (question.meta or {}).get("cell_id")
    for candidate in (recorded, question.id):
        if isinstance(candidate, str) and _CELL_ID.fullmatch(candidate) and candidate not in used:
            return candidate
    number = len(used)
    while f"tree-chat-{number}" in used:
        number += 1
    return f"tree-chat-{number}"


def _cell_id_for(wanted: str, used: set[str]) -> str:
    """``wanted`` as a cell id nbformat allows, unique among ``used`` (then added)."""
    base = re.sub(r"[^a-zA-Z0-9_-]", "-", wanted)[:60] or "cell"
    found, number = base, 1
    while found in used:
        number += 1
        found = f"{base[:56]}-{number}"
    used.add(found)
    return found


def _chat_source(question: Node) -> str:
    """``%%chat`` and the question as typed, its ``{name}`` fields kept; a question that
    keeps only the text it sent gets ``--raw`` when braces in it would be read as fields
    (the cell then sends the text exactly as it was sent)."""
    text, fields = question_source(question)
    raw = not fields and ("{" in text or "}" in text)
    return f"{'%%chat --raw' if raw else '%%chat'}\n{text}"


def _markdown_cell(cell_id: str, source: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "id": cell_id, "metadata": {}, "source": source}


def _code_cell(
    cell_id: str, source: str, outputs: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "cell_type": "code",
        "id": cell_id,
        "metadata": {},
        "execution_count": None,
        "source": source,
        "outputs": outputs or [],
    }


def _display(data: dict[str, Any]) -> dict[str, Any]:
    return {"output_type": "display_data", "data": data, "metadata": {}}


def _folded(title: str, body: str) -> dict[str, Any]:
    """A section folded under its title: thinking, a tool call, a tool result."""
    return _display(
        {
            "text/html": (
                f"<details><summary>{html.escape(title)}</summary>"
                f"<pre>{html.escape(body)}</pre></details>"
            ),
            "text/plain": f"[{title}]\n{body}",
        }
    )


def _outputs(
    tree: SessionTree,
    question: Node,
    replies: list[Node],
    labels: Mapping[str, str],
    prices: Mapping[str, Price],
) -> list[dict[str, Any]]:
    outputs = _images(question)
    last_answer: Node | None = None
    for node in replies:
        if node.role == "assistant":
            last_answer = node
        outputs += _blocks(node)
    if last_answer is not None:
        line = reply_footer(tree, last_answer, labels, prices)
        outputs.append(
            _display({"text/html": f"<sub>{html.escape(line)}</sub>", "text/plain": line})
        )
    return outputs


def _images(node: Node) -> list[dict[str, Any]]:
    """A message's raster images as image outputs (an SVG or a URL is never one)."""
    found = []
    content = node.message.get("content")
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict) or block.get("type") != "image":
            continue
        source = block.get("source")
        if not isinstance(source, dict) or source.get("type") != "base64":
            continue
        media = source.get("media_type")
        data = source.get("data")
        if media in _RASTER and isinstance(data, str) and data:
            found.append(_display({media: data, "text/plain": f"[{media}]"}))
    return found


def _blocks(node: Node) -> list[dict[str, Any]]:
    """A reply or a tool round as outputs: thinking and tool blocks folded, text shown."""
    message = node.message
    content = message.get("content")
    if isinstance(content, str):
        return [_display({"text/markdown": content, "text/plain": content})] if content else []
    outputs: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and block.get("text"):
            text = str(block["text"])
            outputs.append(_display({"text/markdown": text, "text/plain": text}))
        elif kind == "thinking" and block.get("thinking"):
            outputs.append(_folded(_("Thinking"), str(block["thinking"])))
        elif kind == "tool_use":
            arguments = json.dumps(block.get("input", {}), ensure_ascii=False, indent=2)
            title = _("Tool call: {name}").format(name=block.get("name", "?"))
            outputs.append(_folded(title, arguments))
        elif kind == "tool_result":
            body = block.get("content")
            text = body if isinstance(body, str) else message_text({"content": body})
            title = _("Tool result (error)") if block.get("is_error") else _("Tool result")
            outputs.append(_folded(title, text))
    outputs += _images(node)
    return outputs


def reply_footer(
    tree: SessionTree, node: Node, labels: Mapping[str, str], prices: Mapping[str, Price]
) -> str:
    """``a1b2c3d · claude-sonnet-4-6 · 12 in · 345 out · $0.0052 · reply 2/2``: what the
    cell's footer said of the reply, less what only a live kernel knows."""
    meta = node.meta or {}
    parts = [node.id[:7]]
    if meta.get("model"):
        parts.append(str(meta["model"]))
    usage = meta.get("usage")
    if isinstance(usage, dict):
        parts.append(_("{count} in").format(count=_count(usage.get("input_tokens"))))
        parts.append(_("{count} out").format(count=_count(usage.get("output_tokens"))))
        cost = node_cost(node, prices)
        if cost is not None:
            parts.append(dollars(cost))
    if meta.get("interrupted"):
        parts.append(_("interrupted"))
    parts.append(_("reply {position}").format(position=tree.sibling_position(node.id)))
    label = labels.get(node.id)
    if label:
        parts.append(_("label {label!r}").format(label=label))
    return " · ".join(parts)


def _count(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else "?"
