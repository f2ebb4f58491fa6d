"""The integration tests run the SDK against a real sandox: NATS with
authentication, an orchestrator worker and Docker. integration/python_test.go
brings the system up and runs them with SANDOX_IT=1, SANDOX_NATS_URL and
SANDOX_NATS_CREDS set; elsewhere they are skipped."""

from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "integration" in str(item.fspath):
            item.add_marker(pytest.mark.integration)
    if os.environ.get("SANDOX_IT") == "1":
        for name in ("SANDOX_NATS_URL", "SANDOX_NATS_CREDS"):
            if not os.environ.get(name):
                raise pytest.UsageError(f"SANDOX_IT=1 needs {name}")
        return
    skip = pytest.mark.skip(reason="needs a real sandox: run integration/python_test.go (SANDOX_IT=1)")
    for item in items:
        if "integration" in item.keywords:
            item.add_marker(skip)
