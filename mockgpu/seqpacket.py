"""An AF_UNIX SOCK_SEQPACKET service of a `simgpu run` for the interposer in its clients (mockgpu.hostmap,
mockgpu.localpci): the socket is for this user's processes only, and every connection is served on a daemon
thread of its own, so a client stopped inside a signal handler (a debugger, SIGSTOP) holds no other client."""

from __future__ import annotations

import os
import socket
import threading


class SeqpacketService:
    """Listens at `path`; a subclass answers a connection in `serve_connection` (errors it keeps in `errors`)."""

    def __init__(self, path: str):
        self.path = path
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.listener.bind(path)
        os.chmod(path, 0o600)  # the GPUs' memory and registers: for this user's processes only
        self.listener.listen(16)
        self.errors: list[str] = []

    def start(self):
        """Serve in daemon threads."""
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def close(self) -> None:
        """Stop serving."""
        self.listener.close()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.serve_connection, args=(conn,), daemon=True).start()

    def serve_connection(self, conn: socket.socket) -> None:
        """Answer one client connection (and close it)."""
        raise NotImplementedError
