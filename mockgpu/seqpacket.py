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


def send_handout(conn: socket.socket, reply: bytes, fds: list[int]) -> bool:
    """Send `reply` with new descriptors of memory whose lifetime follows the clients' holds on it (a system-memory
    block's, mockgpu.localpci.HostBlock.handout) and close ours; whether it was sent. Called under the simulator's
    lock, so that no collect of unheld blocks sees one between our copy's send and its close (it would take our copy
    for a client's); MSG_DONTWAIT, so that a client that leaves its replies unread (a full socket buffer) loses its
    connection rather than stalling every GPU behind the lock."""
    try:
        socket.send_fds(conn, [reply], fds, socket.MSG_DONTWAIT)
        return True
    except OSError:
        return False
    finally:
        for fd in fds:
            os.close(fd)  # the client's copy (in flight or received) keeps the file description and its lock
