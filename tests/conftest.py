"""Fixtures shared by test modules: ``broker``, a real mosquitto (:mod:`tests.mosquitto`)."""

from __future__ import annotations

import pytest

from tests.mosquitto import Broker


@pytest.fixture
def broker(tmp_path):
    """A started :class:`~tests.mosquitto.Broker` in the test's folder, stopped after it."""
    b = Broker(tmp_path).start()
    yield b
    b.stop()
