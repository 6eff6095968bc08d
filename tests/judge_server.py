"""Start `spamflow judge` on the demo run as a real subprocess (port 0: any free port) and
read the URL it prints; shared by the judge and browser tests."""

from __future__ import annotations

import re
import select
import subprocess
import sys
import time
from pathlib import Path

from spamflow.cli import demo_config_path


def start_judge(workdir: Path, labels: Path, *extra: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "spamflow.cli", "judge", "-c", str(demo_config_path()),
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
