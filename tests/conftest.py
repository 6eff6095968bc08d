import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def plugins():
    from spamflow.plugins import build_plugins

    return build_plugins()


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data, or skip the test saying what is missing."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs {path} (the shared real-data folder beside the repo); it is absent here")
    return path


def spamflow_exe() -> str:
    exe = shutil.which("spamflow") or str(Path(sys.executable).parent / "spamflow")
    return exe
