"""Start `spamflow judge` on the demo run as a real subprocess (port 0: any free port) and
read the URL it prints, or its server on hand-made items in a thread; shared by the judge and
browser tests."""

from __future__ import annotations

import re
import select
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from pathlib import Path

from spamflow.cli import demo_config_path
from spamflow.report.judge import make_server
from spamflow.report.labels import LabelStore
from spamflow.report.sections import Evidence


def start_judge(workdir: Path, labels: Path, *extra: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "spamflow_workflows", "judge", "-c", str(demo_config_path()),
                             "--workdir", str(workdir), "--port", "0", "--labels", str(labels), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    deadline = time.time() + 120
    while time.time() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 1)
        if ready:
            line = proc.stdout.readline()
            found = re.search(r"at (http://127\.0\.0\.1:\d+/)", line)
            if found:
                return proc, found.group(1)
            if not line and proc.poll() is not None:
                break
    proc.kill()
    raise AssertionError(f"spamflow judge did not start: {proc.stderr.read() if proc.stderr else ''}")


@contextmanager
def serve_in_thread(items: list[Evidence], labels: Path) -> Iterator[tuple[ThreadingHTTPServer, int]]:
    """``make_server`` on 127.0.0.1 (any free port) served by a thread: ``(server, port)``."""
    server = make_server(items, LabelStore(labels))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server, int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
