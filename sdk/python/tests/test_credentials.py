from pathlib import Path

import pytest

from sandox import credentials


def test_env_overrides(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SANDOX_NATS_CREDS", "/some/where.creds")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert credentials.default_credentials() == "/some/where.creds"


def test_client_creds_in_config_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("SANDOX_NATS_CREDS", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert credentials.default_credentials() == ""
    (tmp_path / "sandox").mkdir()
    (tmp_path / "sandox" / "client.creds").write_text("creds")
    assert credentials.default_credentials() == str(tmp_path / "sandox" / "client.creds")


def test_home_config_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert credentials.config_dir() == tmp_path / ".config" / "sandox"


def test_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SANDOX_NATS_URL", raising=False)
    assert credentials.default_url() == "nats://127.0.0.1:4222"
    monkeypatch.setenv("SANDOX_NATS_URL", "nats://10.0.0.1:4222")
    assert credentials.default_url() == "nats://10.0.0.1:4222"
