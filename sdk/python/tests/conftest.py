"""Fixtures: a real NATS server (sandox's own, services/natsd) per session."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


class NATSServer:
    """A sandox NATS server in a child process (tests/natsd/main.go)."""

    def __init__(self, binary: Path, streams: bool) -> None:
        self.proc = subprocess.Popen(
            [str(binary), f"-streams={'true' if streams else 'false'}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        if not self.url.startswith("nats://"):
            self.stop()
            raise RuntimeError(f"natsd did not start (exit {self.proc.returncode})")

    def stop(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


@pytest.fixture(scope="session")
def natsd_binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Builds tests/natsd (the Go build cache makes it quick after the first time)."""
    go = shutil.which("go")
    if go is None:
        pytest.skip("the Go toolchain is needed to run sandox's NATS server")
    out = tmp_path_factory.mktemp("natsd") / "natsd"
    subprocess.run([go, "build", "-o", str(out), "./sdk/python/tests/natsd"], cwd=ROOT, check=True)
    return out


@pytest.fixture(scope="session")
def nats_url(natsd_binary: Path) -> Iterator[str]:
    """A NATS server with sandox's streams and no orchestrator."""
    s = NATSServer(natsd_binary, streams=True)
    yield s.url
    s.stop()


@pytest.fixture(scope="session")
def bare_nats_url(natsd_binary: Path) -> Iterator[str]:
    """A NATS server without sandox's streams: sandox is not up."""
    s = NATSServer(natsd_binary, streams=False)
    yield s.url
    s.stop()
