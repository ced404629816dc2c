"""A comm that records what a widget sends, for tests and the widget benchmark.

ipywidgets opens a comm per widget through ``comm.create_comm``; outside a kernel that
is a comm that drops everything. ``recording_comms()`` swaps in one that keeps each
message, and measures it twice: the comm payload (``data``, as the kernel's JSON packer
encodes it) and the whole Jupyter message on the wire (header, parent header, metadata,
content, HMAC signature), built by jupyter_client's own ``Session``. ``deliver`` feeds a
message *from* the browser through the same path ipykernel uses (``handle_msg``).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import comm
from comm.base_comm import BaseComm
from jupyter_client.session import Session as WireSession


def _packed(obj: Any) -> bytes:
    # jupyter_client.session.json_packer, minus its date handling
    return json.dumps(obj, ensure_ascii=False, allow_nan=False).encode("utf8", "surrogateescape")


@dataclass
class Sent:
    msg_type: str
    comm_id: str
    data: dict[str, Any]
    payload_bytes: int
    wire_bytes: int

    @property
    def custom(self) -> dict[str, Any] | None:
        """The custom message content, if this is one."""
        if self.data.get("method") == "custom":
            return self.data["content"]
        return None


@dataclass
class Recorder:
    sent: list[Sent] = field(default_factory=list)
    comms: list[RecordingComm] = field(default_factory=list)
    wire: WireSession = field(default_factory=lambda: WireSession(key=b"0" * 32))

    def customs(self) -> list[dict[str, Any]]:
        return [s.custom for s in self.sent if s.custom is not None]

    def clear(self) -> None:
        self.sent.clear()

    def payload_bytes(self) -> int:
        return sum(s.payload_bytes for s in self.sent)

    def wire_bytes(self) -> int:
        return sum(s.wire_bytes for s in self.sent)


class RecordingComm(BaseComm):
    recorder: Recorder

    def publish_msg(
        self,
        msg_type: str,
        data: Any = None,
        metadata: Any = None,
        buffers: Any = None,
        **keys: Any,
    ) -> None:
        data = data or {}
        content = {"data": data, "comm_id": self.comm_id, **keys}
        wire = self.recorder.wire
        msg = wire.msg(msg_type, content=content, metadata=metadata or {})
        frames = wire.serialize(msg, ident=self.topic)
        size = sum(len(f) for f in frames) + sum(len(b) for b in buffers or [])
        self.recorder.sent.append(Sent(msg_type, self.comm_id, data, len(_packed(data)), size))

    def deliver(self, content: dict[str, Any]) -> None:
        """A custom message from the browser, as ipykernel hands it to the comm."""
        self.handle_msg(
            {
                "content": {
                    "comm_id": self.comm_id,
                    "data": {"method": "custom", "content": content},
                },
                "buffers": [],
            }
        )


@contextlib.contextmanager
def recording_comms() -> Iterator[Recorder]:
    recorder = Recorder()

    def create(*args: Any, **kwargs: Any) -> RecordingComm:
        made = RecordingComm(*args, **kwargs)
        recorder.comms.append(made)
        return made

    RecordingComm.recorder = recorder
    saved = comm.create_comm
    comm.create_comm = create
    try:
        yield recorder
    finally:
        comm.create_comm = saved
