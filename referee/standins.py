"""The table's stand-ins, as the demo and the virtual table use them.

Owns :class:`DemoTable` (the board emulator on a pseudo-terminal behind the host link,
the rendered camera and the panel on gpiozero's mock pins) and :class:`RenderedCamera`
(frames drawn by the renderer and read by the camera pipeline). Stand-ins only: no
production path imports this module.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import replace

from gpiozero.pins.mock import MockFactory

from board_rules import Position
from firmware_bridge.panel import Panel, PanelConfig
from referee.table import EmulatedTable


class _Clock:
    """The panel's clock: moved by hand, so pressing a mock button needs no sleep."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class RenderedCamera:
    """The camera stand-in: frames drawn by the renderer, read by the pipeline, given to the loop one by one.

    A rendered frame is a still, so each reading is at rest (``stable``) as soon as it is read.
    """

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.down = False
        self.geometry = None
        self.palette = None
        self.shots = 0
        self._frames: deque = deque()
        self.last = None  # the last frame and its observation, for the live page

    def read(self):
        return self._frames.popleft() if self._frames else None

    @property
    def pending(self) -> int:
        """Frames taken but not yet read by the loop."""
        return len(self._frames)

    def calibrate(self, position: Position) -> None:
        from vision.calibrate import calibrate  # the vision stack loads only when the demo has a camera
        from vision.checkers import learn_palette
        from vision.render import render

        frame = render(position, seed=self.seed, scene_seed=self.seed)
        self.geometry = calibrate(frame.image)
        self.palette = learn_palette(self.geometry, frame.image, position)

    def hand_over_board(self) -> None:
        """A player's hand covers the board while the checkers move."""
        from vision.observe import Observation

        self._frames.append(Observation("occluded", None, (), None, None))

    def throw(self, position: Position, dice: list[tuple[int, str]], cube, *, cocked: bool = False):
        """Dice (value, half of the board) come to rest in the field; returns the camera's reading of the frame."""
        from vision.observe import read_frame
        from vision.render import FIELD_Y0, FIELD_Y1, GEOMETRY, DieSpec, camera_pose, render

        rng = random.Random(self.seed * 7919 + self.shots)
        self.shots += 1
        y = rng.uniform(FIELD_Y0 + 195, FIELD_Y1 - 195)  # the middle of the field, clear of most checkers
        specs = []
        for i, (value, half) in enumerate(dice):
            x0, _, x1, _ = GEOMETRY.right_half if half == "right" else GEOMETRY.left_half
            if len(dice) == 2 and dice[0][1] == dice[1][1]:  # both in one half: one each side of its middle
                x = rng.uniform(x0 + 20, (x0 + x1) / 2 - 15) if i == 0 else rng.uniform((x0 + x1) / 2 + 15, x1 - 20)
            else:
                x = rng.uniform(x0 + 30, x1 - 30)
            specs.append(DieSpec(value, (x, y + rng.uniform(-20, 20)), cocked=cocked and i == 0))
        frame = render(
            position,
            dice=specs,
            cube=cube,
            camera=camera_pose(self.seed),
            seed=self.seed * 100003 + self.shots,
            scene_seed=self.seed,
        )
        obs = read_frame(self.geometry, frame.image, self.palette)
        if obs.status == "settling":
            obs = replace(obs, status="stable")
        self.last = (frame.image, obs)
        self._frames.append(obs)
        return obs


class DemoTable:
    """The emulated table: sensor board on a pseudo-terminal, rendered camera, panel on mock pins."""

    def __init__(self, seed: int, *, camera: bool = True) -> None:
        self.board = EmulatedTable(seed=seed)
        self.camera = RenderedCamera(seed) if camera else None
        self._factory = MockFactory()
        self._clock = _Clock()
        self._panel_config = PanelConfig.load()
        self.panel = Panel(self._panel_config, pin_factory=self._factory, clock=self._clock)

    @property
    def link(self):
        return self.board.link

    def close(self) -> None:
        self.panel.close()
        self.board.close()

    def put(self, position: Position) -> None:
        """The players put the checkers so."""
        self.board.emulator.set_position(position)

    def press(self, name: str) -> None:
        """A player presses a panel button (down, up)."""
        pin = self._panel_config.buttons[name]
        self._factory.pin(pin).drive_low()
        self._clock.now += 0.2
        self._factory.pin(pin).drive_high()
        self._clock.now += 0.2


def cube_for_camera(ref) -> tuple[int, str] | None:
    """The cube as the renderer draws it: (value, place), or None when the game has no cube."""
    cube = ref.record.cube
    if cube is None or not ref.record.variant.has_cube:
        return None
    return (1, "centre") if cube.owner is None else (cube.value, cube.owner.value)
