"""Thresholds of the camera pipeline, read from a TOML file (``vision/vision.toml`` by default).

Owns :class:`VisionConfig` and its loading; no threshold of the pipeline lives in
code. Imports only ``board_rules.errors``; must not import ``firmware_bridge`` or
``referee``.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path

from board_rules.errors import TavliError
from board_rules.untrusted import read_text

DEFAULT_PATH = Path(__file__).with_name("vision.toml")

# (section, key) of each field in the TOML file
_KEYS = {
    "read_px_per_mm": ("checkers", "px_per_mm"),
    "edge_threshold": ("checkers", "edge_threshold"),
    "edge_blur_mm_per_grey": ("checkers", "edge_blur_mm_per_grey"),
    "edge_blur_above_noise": ("checkers", "edge_blur_above_noise"),
    "bar_min_ring": ("checkers", "bar_min_ring"),
    "faint_rim_frac": ("checkers", "faint_rim_frac"),
    "faint_rim_min_share": ("checkers", "faint_rim_min_share"),
    "tray_max_gap_per_step": ("checkers", "tray_max_gap_per_step"),
    "tray_min_contrast": ("checkers", "tray_min_contrast"),
    "photo_most_on_bar": ("checkers", "photo_most_on_bar"),
    "max_missing_edges": ("gate", "max_missing_edges"),
    "photo_max_missing_edges": ("gate", "photo_max_missing_edges"),
    "min_seen_edges": ("gate", "min_seen_edges"),
    "hand_min_checkers": ("gate", "hand_min_checkers"),
    "hand_min_skin": ("gate", "hand_min_skin"),
    "foreign_min_lab": ("gate", "foreign_min_lab"),
    "foreign_spread": ("gate", "foreign_spread"),
    "stable_frames": ("gate", "stable_frames"),
    "motion_grey_levels": ("gate", "motion_grey_levels"),
    "max_motion_fraction": ("gate", "max_motion_fraction"),
    "reread_changed_px": ("gate", "reread_changed_px"),
    "reread_every_frames": ("gate", "reread_every_frames"),
    "cube_min_outline": ("cube", "min_outline"),
    "cube_min_shape": ("cube", "min_shape"),
    "cube_min_conserve": ("cube", "min_conserve"),
    "cube_min_face_outline": ("cube", "min_face_outline"),
    "cube_min_face_confidence": ("cube", "min_face_confidence"),
    "min_markers": ("calibrate", "min_markers"),
    "max_reprojection_px": ("calibrate", "max_reprojection_px"),
    "drift_px_knocked": ("check", "drift_px_knocked"),
    "px_per_mm": ("rectify", "px_per_mm"),
    "dice_max_side_px": ("dice", "max_side_px"),
    "dice_kernel_frac": ("dice", "kernel_frac"),
    "dice_pip_min_contrast": ("dice", "pip_min_contrast"),
    "dice_pip_min_area_px": ("dice", "pip_min_area_px"),
    "dice_pip_peak_frac": ("dice", "pip_peak_frac"),
    "dice_pip_max_frac": ("dice", "pip_max_frac"),
    "dice_pip_min_aspect": ("dice", "pip_min_aspect"),
    "dice_pip_min_fill": ("dice", "pip_min_fill"),
    "dice_pip_ring_max_spread": ("dice", "pip_ring_max_spread"),
    "dice_face_max_spread": ("dice", "face_max_spread"),
    "dice_face_halo_per_pip": ("dice", "face_halo_per_pip"),
    "dice_face_radius": ("dice", "face_radius"),
    "dice_face_min_contrast_frac": ("dice", "face_min_contrast_frac"),
    "dice_pip_min_core": ("dice", "pip_min_core"),
    "dice_pip_cuts": ("dice", "pip_cuts"),
    "dice_pip_cut_step": ("dice", "pip_cut_step"),
    "dice_split_ratio": ("dice", "split_ratio"),
    "dice_link_max_diameters": ("dice", "link_max_diameters"),
    "dice_link_max_size_ratio": ("dice", "link_max_size_ratio"),
    "dice_link_max_contrast_ratio": ("dice", "link_max_contrast_ratio"),
    "dice_gap_max_contrast": ("dice", "gap_max_contrast"),
    "dice_gap_peak_frac": ("dice", "gap_peak_frac"),
    "dice_pattern_max_error": ("dice", "pattern_max_error"),
    "dice_spacing_min_diameters": ("dice", "spacing_min_diameters"),
    "dice_spacing_max_diameters": ("dice", "spacing_max_diameters"),
    "dice_face_per_pip": ("dice", "face_per_pip"),
    "dice_single_ring_max_contrast": ("dice", "single_ring_max_contrast"),
    "dice_single_min_aspect": ("dice", "single_min_aspect"),
    "dice_single_min_fill": ("dice", "single_min_fill"),
    "dice_cocked_max_aspect": ("dice", "cocked_max_aspect"),
    "dice_cocked_max_aspect_on_plane": ("dice", "cocked_max_aspect_on_plane"),
    "dice_side_near": ("dice", "side_near"),
    "dice_side_far": ("dice", "side_far"),
    "dice_side_min_shade": ("dice", "side_min_shade"),
    "dice_side_max_shade": ("dice", "side_max_shade"),
    "dice_side_max_tint": ("dice", "side_max_tint"),
    "dice_side_min_directions": ("dice", "side_min_directions"),
    "dice_die_target_px": ("dice", "die_target_px"),
    "dice_die_max_px": ("dice", "die_max_px"),
    "dice_die_min_px": ("dice", "die_min_px"),
    "dice_min_legible_px": ("dice", "min_legible_px"),
    "dice_kernel_per_die": ("dice", "kernel_per_die"),
    "dice_pip_max_per_die": ("dice", "pip_max_per_die"),
    "dice_side_run_near": ("dice", "side_run_near"),
    "dice_side_run_far": ("dice", "side_run_far"),
    "dice_side_min_run": ("dice", "side_min_run"),
    "dice_side_run_max_shade": ("dice", "side_run_max_shade"),
    "dice_blob_max_area_per_die2": ("dice", "blob_max_area_per_die2"),
    "dice_blob_max_per_die": ("dice", "blob_max_per_die"),
    "dice_blob_cut_max_area_per_die2": ("dice", "blob_cut_max_area_per_die2"),
    "dice_pip_min_peak": ("dice", "pip_min_peak"),
    "dice_single_face_per_die": ("dice", "single_face_per_die"),
    "dice_bar_min_per_die": ("dice", "bar_min_per_die"),
    "dice_bar_max_per_die": ("dice", "bar_max_per_die"),
    "dice_bar_max_width_per_die": ("dice", "bar_max_width_per_die"),
    "dice_bar_max_aspect": ("dice", "bar_max_aspect"),
    "dice_bar_max_length_ratio": ("dice", "bar_max_length_ratio"),
    "dice_bar_max_turn_deg": ("dice", "bar_max_turn_deg"),
    "dice_bar_max_shift": ("dice", "bar_max_shift"),
    "dice_bar_min_gap_per_die": ("dice", "bar_min_gap_per_die"),
    "dice_bar_max_gap_per_die": ("dice", "bar_max_gap_per_die"),
    "dice_bar_mid_reach": ("dice", "bar_mid_reach"),
    "dice_bar_flat_min_per_die": ("dice", "bar_flat_min_per_die"),
    "dice_bar_flat_min_gap_per_die": ("dice", "bar_flat_min_gap_per_die"),
    "dice_bar_flat_min_ratio": ("dice", "bar_flat_min_ratio"),
    "dice_probe_min_frac": ("dice", "probe_min_frac"),
    "dice_two_min_span_per_die": ("dice", "two_min_span_per_die"),
    "photo_dice_reader": ("dice", "photo_reader"),
    "board_dice_reader": ("dice", "board_reader"),
    "real_board_dice_reader": ("dice", "real_board_reader"),
    "learned_min_score": ("dice", "learned_min_score"),
    "learned_sure_score": ("dice", "learned_sure_score"),
    "learned_alone_score": ("dice", "learned_alone_score"),
}

DICE_READERS = ("verified", "learned", "classical")


class ConfigError(TavliError, ValueError):
    """A vision config file is missing, not TOML, or holds a bad value."""


def read_toml(path: str | Path) -> dict:
    """A vision config file's tables. Raises :class:`ConfigError` if it cannot be read or is not TOML."""
    text = read_text(path, "vision config", ConfigError)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"vision config {str(path)!r}: not valid TOML: {exc}") from None


@dataclass(frozen=True, slots=True)
class VisionConfig:
    """The pipeline's thresholds (see ``vision.toml`` for what each one means)."""

    min_markers: int = 4
    read_px_per_mm: float = 2.0
    edge_threshold: float = 11.0
    edge_blur_mm_per_grey: float = 0.19
    edge_blur_above_noise: float = 0.8
    bar_min_ring: float = 0.55
    faint_rim_frac: float = 0.7
    faint_rim_min_share: float = 0.8
    tray_max_gap_per_step: float = 0.4
    tray_min_contrast: float = 20.0
    photo_most_on_bar: int = 3
    max_missing_edges: float = 0.25
    photo_max_missing_edges: float = 0.8
    min_seen_edges: float = 0.5
    hand_min_checkers: float = 0.5
    hand_min_skin: float = 0.6
    foreign_min_lab: float = 20.0
    foreign_spread: float = 4.0
    stable_frames: int = 3
    motion_grey_levels: float = 25.0
    max_motion_fraction: float = 0.002
    reread_changed_px: int = 1
    reread_every_frames: int = 30
    cube_min_outline: float = 0.6
    cube_min_shape: float = 0.44
    cube_min_conserve: float = 0.25
    cube_min_face_outline: float = 0.4
    cube_min_face_confidence: float = 0.9
    max_reprojection_px: float = 3.0
    drift_px_knocked: float = 4.0
    px_per_mm: float = 1.0
    dice_max_side_px: int = 1600
    dice_kernel_frac: float = 0.04
    dice_pip_min_contrast: float = 40.0
    dice_pip_min_area_px: float = 5.0
    dice_pip_peak_frac: float = 0.5
    dice_pip_max_frac: float = 0.035
    dice_pip_min_aspect: float = 0.62
    dice_pip_min_fill: float = 0.75
    dice_pip_ring_max_spread: float = 70.0
    dice_face_max_spread: float = 30.0
    dice_face_halo_per_pip: float = 0.35
    dice_face_radius: float = 0.35
    dice_face_min_contrast_frac: float = 0.5
    dice_pip_min_core: float = 0.3
    dice_pip_cuts: int = 2
    dice_pip_cut_step: float = 0.15
    dice_split_ratio: float = 1.3
    dice_link_max_diameters: float = 5.5
    dice_link_max_size_ratio: float = 1.7
    dice_link_max_contrast_ratio: float = 2.0
    dice_gap_max_contrast: float = 30.0
    dice_gap_peak_frac: float = 0.35
    dice_pattern_max_error: float = 0.3
    dice_spacing_min_diameters: float = 1.5
    dice_spacing_max_diameters: float = 5.0
    dice_face_per_pip: float = 5.9
    dice_single_ring_max_contrast: float = 30.0
    dice_single_min_aspect: float = 0.66
    dice_single_min_fill: float = 0.9
    dice_cocked_max_aspect: float = 0.72
    dice_cocked_max_aspect_on_plane: float = 0.8
    dice_side_near: float = 0.5
    dice_side_far: float = 0.6
    dice_side_min_shade: float = 0.45
    dice_side_max_shade: float = 0.7
    dice_side_max_tint: float = 0.1
    dice_side_min_directions: int = 3
    dice_die_target_px: float = 24.0
    dice_die_max_px: float = 36.0
    dice_die_min_px: float = 20.0
    dice_min_legible_px: float = 9.0
    dice_kernel_per_die: float = 0.45
    dice_pip_max_per_die: float = 0.35
    dice_side_run_near: float = 0.42
    dice_side_run_far: float = 0.58
    dice_side_min_run: int = 3
    dice_side_run_max_shade: float = 0.78
    dice_blob_max_area_per_die2: float = 0.35
    dice_blob_max_per_die: float = 1.2
    dice_blob_cut_max_area_per_die2: float = 0.35
    dice_pip_min_peak: float = 80.0
    dice_single_face_per_die: float = 0.42
    dice_bar_min_per_die: float = 0.5
    dice_bar_max_per_die: float = 0.95
    dice_bar_max_width_per_die: float = 0.35
    dice_bar_max_aspect: float = 0.5
    dice_bar_max_length_ratio: float = 1.3
    dice_bar_max_turn_deg: float = 15.0
    dice_bar_max_shift: float = 0.25
    dice_bar_min_gap_per_die: float = 0.4
    dice_bar_max_gap_per_die: float = 0.75
    dice_bar_mid_reach: float = 0.35
    dice_bar_flat_min_per_die: float = 0.76
    dice_bar_flat_min_gap_per_die: float = 0.45
    dice_bar_flat_min_ratio: float = 1.4
    dice_probe_min_frac: float = 0.5
    dice_two_min_span_per_die: float = 0.6
    photo_dice_reader: str = "learned"
    board_dice_reader: str = "classical"
    real_board_dice_reader: str = "verified"
    learned_min_score: float = 0.45
    learned_sure_score: float = 0.6
    learned_alone_score: float = 0.45

    def __post_init__(self) -> None:
        if not isinstance(self.min_markers, int) or not 3 <= self.min_markers <= 4:
            raise ConfigError(f"min_markers: {self.min_markers!r}: expected 3 or 4")
        for name in ("stable_frames", "reread_changed_px", "reread_every_frames"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ConfigError(f"{name}: {v!r}: expected an integer >= 1")
        v = self.photo_most_on_bar
        if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= 15:
            raise ConfigError(f"photo_most_on_bar: {v!r}: expected an integer from 0 to 15")
        for name in (
            "max_reprojection_px",
            "drift_px_knocked",
            "px_per_mm",
            "read_px_per_mm",
            "edge_threshold",
            "motion_grey_levels",
            "edge_blur_above_noise",
            "hand_min_checkers",
            "foreign_min_lab",
            "foreign_spread",
            "dice_min_legible_px",
            "tray_min_contrast",
        ):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
                raise ConfigError(f"{name}: {v!r}: expected a positive number")
        blur = self.edge_blur_mm_per_grey
        if isinstance(blur, bool) or not isinstance(blur, (int, float)) or not 0 <= blur <= 1:
            raise ConfigError(
                f"edge_blur_mm_per_grey: {blur!r}: expected a number of mm (per grey level of noise) from 0 to 1"
            )
        for name in (
            "bar_min_ring",
            "faint_rim_frac",
            "faint_rim_min_share",
            "tray_max_gap_per_step",
            "max_missing_edges",
            "photo_max_missing_edges",
            "min_seen_edges",
            "hand_min_skin",
            "max_motion_fraction",
            "cube_min_outline",
            "cube_min_shape",
            "cube_min_conserve",
            "cube_min_face_outline",
            "cube_min_face_confidence",
        ):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < 1:
                raise ConfigError(f"{name}: {v!r}: expected a fraction between 0 and 1")
        for name in ("photo_dice_reader", "board_dice_reader", "real_board_dice_reader"):
            if getattr(self, name) not in DICE_READERS:
                raise ConfigError(f"{name}: {getattr(self, name)!r}: expected one of {', '.join(DICE_READERS)}")
        for name in ("learned_min_score", "learned_sure_score", "learned_alone_score"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < 1:
                raise ConfigError(f"{name}: {v!r}: expected a fraction between 0 and 1")
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, float) and not math.isfinite(v):
                raise ConfigError(f"{f.name}: {v!r}: expected a finite number")
            if f.name.startswith("dice_") and (isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0):
                raise ConfigError(f"{f.name}: {v!r}: expected a positive number")

        if self.cube_min_shape > self.cube_min_outline:
            raise ConfigError(
                f"cube.min_shape: {self.cube_min_shape!r}: expected at most cube.min_outline ({self.cube_min_outline!r})"
            )
        if self.cube_min_conserve > self.cube_min_shape:
            raise ConfigError(
                f"cube.min_conserve: {self.cube_min_conserve!r}: expected at most cube.min_shape ({self.cube_min_shape!r})"
            )
        if not self.cube_min_conserve <= self.cube_min_face_outline <= self.cube_min_outline:
            raise ConfigError(
                f"cube.min_face_outline: {self.cube_min_face_outline!r}: expected from cube.min_conserve ({self.cube_min_conserve!r}) "
                f"to cube.min_outline ({self.cube_min_outline!r})"
            )

    @classmethod
    def load(cls, path: str | Path = DEFAULT_PATH) -> VisionConfig:
        """Read a config file; keys it leaves out keep their defaults.

        Raises :class:`ConfigError` if the file cannot be read, is not TOML, or holds a bad value.
        """
        data = read_toml(path)
        known: dict[str, set[str]] = {}
        for section, key in _KEYS.values():
            known.setdefault(section, set()).add(key)
        for section, keys in known.items():
            table = data.get(section, {})
            unknown = sorted(set(table) - keys) if isinstance(table, dict) else []
            if unknown:
                raise ConfigError(f"vision config {str(path)!r}: [{section}] {unknown[0]}: not a threshold of vision")
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
