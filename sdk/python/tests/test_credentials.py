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


# A user seed from the NATS documentation's examples, for tests only.
TEST_SEED = "SUAMLK2ZNL35WSMW37E7UD4VZ7ELPKW7DHC3BWBSD2GCZ7IUQQXZIORRBU"
TEST_JWT = "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.eyJzdWIiOiJ0ZXN0In0.c2ln"
CREDS = f"""-----BEGIN NATS USER JWT-----
{TEST_JWT}
------END NATS USER JWT------

************************* IMPORTANT *************************
NKEY Seed printed below can be used to sign and prove identity.

-----BEGIN USER NKEY SEED-----
{TEST_SEED}
------END USER NKEY SEED------
"""


def test_caller_signs_the_command_id(tmp_path: Path) -> None:
    import base64

    import nkeys

    f = tmp_path / "client.creds"
    f.write_text(CREDS)
    caller = credentials.load_caller(str(f))
    assert caller.jwt == TEST_JWT
    h = caller.headers("cmd-1")
    assert h["Sandox-Caller-Jwt"] == TEST_JWT
    sig = h["Sandox-Caller-Sig"]
    assert "=" not in sig, "base64url without padding, as the Go side decodes it"
    raw = base64.urlsafe_b64decode(sig + "=" * (-len(sig) % 4))
    pub = nkeys.from_seed(TEST_SEED.encode())
    assert pub.verify(b"cmd-1", raw)
    with pytest.raises(nkeys.ErrInvalidSignature):
        pub.verify(b"cmd-2", raw)


def test_caller_refuses_what_is_not_creds(tmp_path: Path) -> None:
    f = tmp_path / "bad.creds"
    f.write_text("not a creds file")
    with pytest.raises(ValueError, match="want a user JWT and a user seed"):
        credentials.load_caller(str(f))


def test_caller_signs_a_batch(tmp_path: Path) -> None:
    import base64
    import hashlib

    import nkeys

    f = tmp_path / "client.creds"
    f.write_text(CREDS)
    payload = b'{"filesystem_tools.stat_path": {"path": "."}}'
    h = credentials.load_caller(str(f)).batch_headers("b1", payload)
    sig = h["Sandox-Caller-Sig"]
    raw = base64.urlsafe_b64decode(sig + "=" * (-len(sig) % 4))
    signed = b"b1\n" + hashlib.sha256(payload).hexdigest().encode()
    assert nkeys.from_seed(TEST_SEED.encode()).verify(signed, raw)
