"""What the benchmarks share: a free loopback port and the fake LLM server in a process of its own."""

import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_fake_server() -> tuple[subprocess.Popen, str]:
    """The fake LLM server on a free 127.0.0.1 port; returns the process and its base URL (without /v1)."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "lab.fake_llm", "--port", str(port)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    server.stdout.readline()  # the "serving on" line
    return server, f"http://127.0.0.1:{port}"
