"""A real mosquitto for the tests: the shipped hall config, on 127.0.0.1 at a free port, in a folder of its own.

:class:`Broker` writes the password file (``mosquitto_passwd``), the shipped ACL and a config
derived from ``referee/hall/mosquitto.conf`` (the listener and the paths changed, nothing
else), starts mosquitto, and can stop and start it again on the same port. Without mosquitto
the tests that need it skip, unless ``TAVLI_REQUIRE_BROKER=1`` (CI) makes that a failure.
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONF = ROOT / "referee" / "hall" / "mosquitto.conf"
ACL = ROOT / "referee" / "hall" / "tavli.acl"
USERS = {"hall": "organiser-pw", "t1": "t1-pw", "t2": "t2-pw"} | {f"sim-{n}": f"sim-{n}-pw" for n in range(100)}


def mosquitto_or_skip() -> str:
    """The mosquitto binary; skips the test where it is missing (fails under ``TAVLI_REQUIRE_BROKER``)."""
    found = shutil.which("mosquitto") or ("/usr/sbin/mosquitto" if os.path.exists("/usr/sbin/mosquitto") else None)
    if found is None or shutil.which("mosquitto_passwd") is None:
        if os.environ.get("TAVLI_REQUIRE_BROKER") == "1":
            pytest.fail("mosquitto is not installed (apt-get install mosquitto); TAVLI_REQUIRE_BROKER=1")
        pytest.skip("mosquitto is not installed")
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Broker:
    """mosquitto with the hall's password file and ACL, in ``folder``."""

    def __init__(self, folder: Path) -> None:
        self.binary = mosquitto_or_skip()
        self.folder = folder
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        passwd = folder / "tavli.passwd"
        passwd.write_text("".join(f"{user}:{password}\n" for user, password in USERS.items()), encoding="utf-8")
        subprocess.run(["mosquitto_passwd", "-U", str(passwd)], check=True, capture_output=True)
        shutil.copy(ACL, folder / "tavli.acl")
        (folder / "data").mkdir(exist_ok=True)
        lines = []
        for line in CONF.read_text(encoding="utf-8").splitlines():
            key = line.split(" ", 1)[0]
            if key == "listener":
                line = f"listener {self.port} 127.0.0.1"
            elif key == "password_file":
                line = f"password_file {passwd}"
            elif key == "acl_file":
                line = f"acl_file {folder / 'tavli.acl'}"
            elif key == "persistence_location":
                line = f"persistence_location {folder / 'data'}/"
            lines.append(line)
        lines.append(f"user {getpass.getuser()}")  # as root it would switch to 'mosquitto', who cannot read here
        self.conf = folder / "mosquitto.conf"
        self.conf.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def url(self, user: str) -> str:
        return f"mqtt://{user}:{USERS[user]}@127.0.0.1:{self.port}"

    def start(self) -> Broker:
        self.proc = subprocess.Popen(
            [self.binary, "-c", str(self.conf)],
            stdout=subprocess.DEVNULL,
            stderr=open(self.folder / "mosquitto.log", "ab"),  # noqa: SIM115 - the broker's, for its lifetime
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"mosquitto did not listen on {self.port}: {(self.folder / 'mosquitto.log').read_text()}")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None
