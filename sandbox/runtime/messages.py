"""Messages between the container's own processes: JSON on a SOCK_SEQPACKET socket, descriptors by SCM_RIGHTS.

PID 1 talks so to the zygote and to the judge template, and a judge to the zygote (zygote.py, judge_template.py).
"""

from __future__ import annotations

import json
import os
import socket

MAX_FDS = 8
MAX_BYTES = 1 << 16
# Compact JSON, as the runtime's processes send it to each other and to the host (wire.py, supervisor.py too).
# Made once: json.dumps with arguments of its own builds an encoder per call, and in a forked judge, candidate
# or zygote the pages that touches are copy-on-write faults.
encode = json.JSONEncoder(separators=(",", ":")).encode


def send(sock: socket.socket, message: dict, fds: "list | None" = None) -> None:
    data = encode(message).encode()
    if fds:
        socket.send_fds(sock, [data], fds)
    else:
        sock.send(data)


def receive(sock: socket.socket) -> "tuple[dict | None, list]":
    """The next message and the descriptors it carried; (None, []) once the other side has hung up (or sent
    something that is not a JSON object)."""
    try:
        data, fds, _, _ = socket.recv_fds(sock, MAX_BYTES, MAX_FDS)
    except (ConnectionResetError, OSError):
        return None, []
    if not data:
        for fd in fds:
            os.close(fd)
        return None, []
    try:
        message = json.loads(data)
    except ValueError:
        message = None
    return (message if isinstance(message, dict) else None), fds
