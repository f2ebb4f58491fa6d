"""Where a client finds NATS, as the Go SDK does (sdk/credentials.go)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

CREDENTIALS_ENV = "SANDOX_NATS_CREDS"
"""Names a .creds file that overrides the default."""

URL_ENV = "SANDOX_NATS_URL"
"""Names the NATS server URL."""

CLIENT_CREDENTIALS_FILE = "client.creds"
"""The file `sandox up` writes, with mode 0600, in config_dir()."""

DEFAULT_URL = "nats://127.0.0.1:4222"


def config_dir() -> Path:
    """Returns sandox's directory under the user's configuration directory:
    $XDG_CONFIG_HOME/sandox, or ~/.config/sandox on Linux (Go's
    os.UserConfigDir)."""
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    elif os.name == "nt":
        base = Path(os.environ.get("AppData", Path.home()))
    else:
        xdg = os.environ.get("XDG_CONFIG_HOME", "")
        base = Path(xdg) if xdg else Path.home() / ".config"
    return base / "sandox"


def default_credentials() -> str:
    """Returns the credentials file a client uses when it is given none:
    $SANDOX_NATS_CREDS when set, else client.creds in config_dir() when that
    file exists, else "" (connect without credentials)."""
    env = os.environ.get(CREDENTIALS_ENV, "")
    if env:
        return env
    f = config_dir() / CLIENT_CREDENTIALS_FILE
    return str(f) if f.exists() else ""


def default_url() -> str:
    """Returns $SANDOX_NATS_URL, or nats://127.0.0.1:4222 (where `sandox up`
    listens)."""
    return os.environ.get(URL_ENV, "") or DEFAULT_URL
