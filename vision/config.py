"""Thresholds of the camera pipeline, read from a TOML file (``vision/vision.toml`` by default).

Owns :class:`VisionConfig` and its loading; no threshold of the pipeline lives in
code. Imports only ``board_rules.errors``; must not import ``firmware_bridge`` or
``referee``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from pathlib import Path

from board_rules.errors import TavliError

DEFAULT_PATH = Path(__file__).with_name("vision.toml")

# (section, key) of each field in the TOML file
_KEYS = {
    "min_markers": ("calibrate", "min_markers"),
    "max_reprojection_px": ("calibrate", "max_reprojection_px"),
    "drift_px_knocked": ("check", "drift_px_knocked"),
    "px_per_mm": ("rectify", "px_per_mm"),
}


class ConfigError(TavliError, ValueError):
    """A vision config file is missing, not TOML, or holds a bad value."""


@dataclass(frozen=True, slots=True)
class VisionConfig:
    """The pipeline's thresholds (see ``vision.toml`` for what each one means)."""

    min_markers: int = 4
    max_reprojection_px: float = 3.0
    drift_px_knocked: float = 4.0
    px_per_mm: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.min_markers, int) or not 3 <= self.min_markers <= 4:
            raise ConfigError(f"min_markers: {self.min_markers!r}: expected 3 or 4")
        for name in ("max_reprojection_px", "drift_px_knocked", "px_per_mm"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
                raise ConfigError(f"{name}: {v!r}: expected a positive number")

    @classmethod
    def load(cls, path: str | Path = DEFAULT_PATH) -> VisionConfig:
        """Read a config file; keys it leaves out keep their defaults.

        Raises :class:`ConfigError` if the file cannot be read, is not TOML, or holds a bad value.
        """
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"vision config {str(path)!r}: cannot read: {exc.strerror or exc}") from exc
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"vision config {str(path)!r}: not valid TOML: {exc}") from exc
        values = {}
        for f in fields(cls):
            section, key = _KEYS[f.name]
            table = data.get(section, {})
            if not isinstance(table, dict):
                raise ConfigError(f"vision config {str(path)!r}: [{section}]: expected a table")
            if key in table:
                values[f.name] = table[key]
        try:
            return cls(**values)
        except ConfigError as exc:
            raise ConfigError(f"vision config {str(path)!r}: {exc}") from None


_DEFAULT: VisionConfig | None = None


def default_config() -> VisionConfig:
    """The config in ``vision/vision.toml`` (read once)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = VisionConfig.load()
    return _DEFAULT
