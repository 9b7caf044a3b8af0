"""The Raspberry Pi panel: seven buttons, a status LED and a buzzer, on gpiozero.

Owns the pin configuration (:class:`PanelConfig`, from ``hardware/panel.toml``), the
gpiozero composites (:class:`PanelButtons`, :class:`Panel`), debounce, press and long
press, and the LED and buzzer patterns. gpiozero's callbacks only put frozen
:class:`PanelEvent` values on ``panel.events``; :data:`ACTIONS` says what the referee
does for each. Why debounce is our own timing: ``docs/firmware-notes.md``. Imports
gpiozero and ``board_rules.errors``; opens no pin at import time (the pin factory is
injected).
"""

from __future__ import annotations

import math
import queue
import threading
import time
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

from gpiozero import LED, Button, Buzzer, CompositeDevice

from board_rules.errors import TavliError

__all__ = [
    "ACTIONS",
    "BUTTONS",
    "DEFAULT_CONFIG_PATH",
    "GPIO_RANGE",
    "KINDS",
    "Panel",
    "PanelButtons",
    "PanelConfig",
    "PanelConfigError",
    "PanelEvent",
]

#: Button names, in panel order (config keys and ``PanelEvent.button``).
BUTTONS: tuple[str, ...] = ("end_turn", "double", "take", "pass", "resign", "hint", "undo")

#: Event kinds.
KINDS: tuple[str, ...] = ("press", "long_press")

#: What the referee does for each (button, kind). ``pass`` is ``panel.buttons.pass_`` in gpiozero (a keyword).
ACTIONS: Mapping[tuple[str, str], str] = MappingProxyType(
    {
        ("end_turn", "press"): "end_turn",
        ("end_turn", "long_press"): "end_turn",
        ("double", "press"): "double",
        ("double", "long_press"): "double",
        ("take", "press"): "take",
        ("take", "long_press"): "beaver",
        ("pass", "press"): "pass",
        ("pass", "long_press"): "pass",
        ("resign", "press"): "offer_resignation",
        ("resign", "long_press"): "cycle_resignation_level",
        ("hint", "press"): "show_hint",
        ("hint", "long_press"): "hide_hint",
        ("undo", "press"): "undo_checker_move",
        ("undo", "long_press"): "undo_play",
    }
)

#: BCM GPIO numbers usable on the Pi's 40-pin header. GPIO 0 and 1 (ID_SD, ID_SC)
#: are reserved for the HAT ID EEPROM, so the range starts at 2.
GPIO_RANGE = range(2, 28)

#: The default config file, beside the wiring documents.
DEFAULT_CONFIG_PATH = Path(__file__).resolve().parent.parent / "hardware" / "panel.toml"

_OUTPUTS = ("status_led", "buzzer")
_TIMING_DEFAULTS: Mapping[str, float] = MappingProxyType(
    {
        "bounce_s": 0.05,
        "long_press_s": 1.0,
        "slow_blink_s": 0.5,
        "fast_blink_s": 0.1,
        "beep_s": 0.1,
        "error_buzz_s": 0.15,
    }
)


class PanelConfigError(TavliError, ValueError):
    """The panel's config file or values are not usable."""


def _attr(name: str) -> str:
    """The gpiozero attribute for a button name (``pass`` is a keyword)."""
    return "pass_" if name == "pass" else name


@dataclass(frozen=True, slots=True)
class PanelConfig:
    """Pin numbers (BCM) and timings of the Pi panel, validated on construction.

    ``buttons`` maps every name in :data:`BUTTONS` to a GPIO; ``status_led`` and
    ``buzzer`` are GPIOs; all nine pins are distinct and in :data:`GPIO_RANGE`.
    Times are seconds: ``0 <= bounce_s < long_press_s``, the others positive.
    Raises :class:`PanelConfigError` naming the bad key and value.
    """

    buttons: Mapping[str, int]
    status_led: int
    buzzer: int
    bounce_s: float = _TIMING_DEFAULTS["bounce_s"]
    long_press_s: float = _TIMING_DEFAULTS["long_press_s"]
    slow_blink_s: float = _TIMING_DEFAULTS["slow_blink_s"]
    fast_blink_s: float = _TIMING_DEFAULTS["fast_blink_s"]
    beep_s: float = _TIMING_DEFAULTS["beep_s"]
    error_buzz_s: float = _TIMING_DEFAULTS["error_buzz_s"]
    source: str = field(default="<config>", compare=False)

    def __post_init__(self) -> None:
        where = self.source
        if not isinstance(self.buttons, Mapping):
            raise PanelConfigError(f"{where}: [buttons] must be a table of name = GPIO, got {self.buttons!r}")
        for name in self.buttons:
            if name not in BUTTONS:
                raise PanelConfigError(
                    f"{where}: unknown button {name!r} in [buttons]; expected the names {', '.join(BUTTONS)}"
                )
        for name in BUTTONS:
            if name not in self.buttons:
                raise PanelConfigError(f"{where}: [buttons] is missing {name!r}")
        pins = {f"[buttons] {name}": self.buttons[name] for name in BUTTONS}
        pins["[outputs] status_led"] = self.status_led
        pins["[outputs] buzzer"] = self.buzzer
        used: dict[int, str] = {}
        for key, pin in pins.items():
            if isinstance(pin, bool) or not isinstance(pin, int):
                raise PanelConfigError(f"{where}: {key} = {pin!r} is not a BCM GPIO number (an integer)")
            if pin not in GPIO_RANGE:
                raise PanelConfigError(
                    f"{where}: {key} = {pin!r} is not a BCM GPIO on the Pi's header; "
                    f"expected {GPIO_RANGE.start}..{GPIO_RANGE.stop - 1}"
                )
            if pin in used:
                raise PanelConfigError(
                    f"{where}: {key} = {pin!r} is already used by {used[pin]}; every pin must be distinct"
                )
            used[pin] = key
        for key in _TIMING_DEFAULTS:
            value = getattr(self, key)
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
                or value < 0
                or (value == 0 and key != "bounce_s")
            ):
                raise PanelConfigError(
                    f"{where}: [timing] {key} = {value!r} is not a usable time; expected a positive number of seconds"
                )
            object.__setattr__(self, key, float(value))
        if self.bounce_s >= self.long_press_s:
            raise PanelConfigError(
                f"{where}: [timing] bounce_s = {self.bounce_s!r} must be shorter than "
                f"long_press_s = {self.long_press_s!r}"
            )
        object.__setattr__(self, "buttons", MappingProxyType(dict(self.buttons)))

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = "<config>") -> PanelConfig:
        """Build a config from parsed TOML (tables ``buttons``, ``outputs``, ``timing``).

        Raises :class:`PanelConfigError` for a missing or unknown table or key.
        """
        for table in data:
            if table not in ("buttons", "outputs", "timing"):
                raise PanelConfigError(f"{source}: unknown table [{table}]; expected [buttons], [outputs], [timing]")
        buttons = data.get("buttons")
        if buttons is None:
            raise PanelConfigError(f"{source}: the [buttons] table is missing")
        outputs = data.get("outputs", {})
        timing = data.get("timing", {})
        for table, value in (("outputs", outputs), ("timing", timing)):
            if not isinstance(value, Mapping):
                raise PanelConfigError(f"{source}: [{table}] must be a table, got {value!r}")
        for key in outputs:
            if key not in _OUTPUTS:
                raise PanelConfigError(f"{source}: unknown key {key!r} in [outputs]; expected status_led, buzzer")
        for key in _OUTPUTS:
            if key not in outputs:
                raise PanelConfigError(f"{source}: [outputs] is missing {key!r}")
        for key in timing:
            if key not in _TIMING_DEFAULTS:
                raise PanelConfigError(
                    f"{source}: unknown key {key!r} in [timing]; expected {', '.join(_TIMING_DEFAULTS)}"
                )
        return cls(buttons=buttons, status_led=outputs["status_led"], buzzer=outputs["buzzer"], source=source, **timing)

    @classmethod
    def load(cls, path: str | Path = DEFAULT_CONFIG_PATH) -> PanelConfig:
        """Read and validate a panel config file (TOML).

        Raises :class:`PanelConfigError` if the file is missing, not TOML, or invalid.
        """
        path = Path(path)
        try:
            with path.open("rb") as f:
                data = tomllib.load(f)
        except FileNotFoundError:
            raise PanelConfigError(f"panel config {str(path)!r} does not exist") from None
        except tomllib.TOMLDecodeError as e:
            raise PanelConfigError(f"{path}: not valid TOML: {e}") from e
        return cls.from_mapping(data, source=str(path))

    def replace(self, **changes: Any) -> PanelConfig:
        """A copy with some fields changed (validated again)."""
        values = {name: getattr(self, name) for name in self.__dataclass_fields__}
        values.update(changes)
        return PanelConfig(**values)


@dataclass(frozen=True, slots=True)
class PanelEvent:
    """One button event: ``button`` in :data:`BUTTONS`, ``kind`` in :data:`KINDS`.

    ``at`` is the panel clock's reading (seconds) when the event was decided.
    ``str()`` gives ``"resign long_press 12.5"``; :meth:`parse` reads it back.
    Raises :class:`ValueError` for an unknown button or kind.
    """

    button: str
    kind: str
    at: float

    def __post_init__(self) -> None:
        if self.button not in BUTTONS:
            raise ValueError(f"unknown panel button {self.button!r}; expected one of {BUTTONS}")
        if self.kind not in KINDS:
            raise ValueError(f"unknown panel event kind {self.kind!r}; expected one of {KINDS}")

    @property
    def action(self) -> str:
        """What the referee does for this event (:data:`ACTIONS`)."""
        return ACTIONS[self.button, self.kind]

    def __str__(self) -> str:
        return f"{self.button} {self.kind} {self.at!r}"

    @classmethod
    def parse(cls, text: str) -> PanelEvent:
        """Parse ``"<button> <kind> <at>"``; raises :class:`ValueError` if malformed."""
        parts = text.split()
        if len(parts) != 3:
            raise ValueError(f"not a panel event: {text!r}; expected '<button> <kind> <at>'")
        try:
            at = float(parts[2])
        except ValueError:
            raise ValueError(f"not a panel event: {text!r}; {parts[2]!r} is not a time") from None
        return cls(parts[0], parts[1], at)


class PanelButtons(CompositeDevice):
    """The seven panel buttons as one named gpiozero composite.

    Attributes ``end_turn``, ``double``, ``take``, ``pass_``, ``resign``, ``hint``,
    ``undo`` are :class:`gpiozero.Button` (internal pull-up, pressed = low,
    ``bounce_time=None``, ``hold_time=long_press_s``, no hold repeat).
    """

    def __init__(self, config: PanelConfig, *, pin_factory=None) -> None:
        buttons: dict[str, Button] = {}
        try:
            for name in BUTTONS:
                buttons[_attr(name)] = Button(
                    config.buttons[name],
                    pull_up=True,
                    bounce_time=None,
                    hold_time=config.long_press_s,
                    hold_repeat=False,
                    pin_factory=pin_factory,
                )
        except BaseException:
            for button in buttons.values():
                button.close()
            raise
        super().__init__(_order=[_attr(name) for name in BUTTONS], pin_factory=pin_factory, **buttons)

    def button(self, name: str) -> Button:
        """The gpiozero Button for a name in :data:`BUTTONS`; raises :class:`KeyError`."""
        if name not in BUTTONS:
            raise KeyError(f"unknown panel button {name!r}; expected one of {BUTTONS}")
        return getattr(self, _attr(name))


class _Contact:
    """Debounce and long-press state of one button (guarded by the panel's lock)."""

    __slots__ = ("chatter", "down_at", "long_sent", "quiet_until")

    def __init__(self) -> None:
        self.down_at: float | None = None
        self.long_sent = False
        self.chatter = False
        self.quiet_until = -math.inf


class Panel(CompositeDevice):
    """The Pi panel: ``buttons`` (:class:`PanelButtons`), ``status_led`` and ``buzzer``.

    ``pin_factory`` goes to every device; ``clock`` (default :func:`time.monotonic`)
    times every edge; events go on ``events`` (a new queue if ``None``). A closure
    shorter than ``bounce_s`` is ignored, as is one within ``bounce_s`` of a release
    (chatter). ``long_press`` comes once, when held ``long_press_s`` (gpiozero's hold
    thread) or at a release that late; ``press`` at the release of a shorter closure.
    Raises gpiozero's errors if a pin cannot be opened.
    """

    SPEEDS: ClassVar[tuple[str, ...]] = ("slow", "fast")

    def __init__(
        self,
        config: PanelConfig,
        *,
        pin_factory=None,
        clock: Callable[[], float] = time.monotonic,
        events: queue.Queue[PanelEvent] | None = None,
    ) -> None:
        self.config = config
        self.events: queue.Queue[PanelEvent] = queue.Queue() if events is None else events
        self._clock = clock
        self._lock = threading.Lock()
        self._contacts = {name: _Contact() for name in BUTTONS}
        devices: list = []
        try:
            buttons = PanelButtons(config, pin_factory=pin_factory)
            devices.append(buttons)
            status_led = LED(config.status_led, active_high=True, initial_value=False, pin_factory=pin_factory)
            devices.append(status_led)
            buzzer = Buzzer(config.buzzer, active_high=True, initial_value=False, pin_factory=pin_factory)
            devices.append(buzzer)
        except BaseException:
            for device in devices:
                device.close()
            raise
        super().__init__(
            buttons=buttons,
            status_led=status_led,
            buzzer=buzzer,
            _order=["buttons", "status_led", "buzzer"],
            pin_factory=pin_factory,
        )
        for name in BUTTONS:
            button = buttons.button(name)
            button.when_pressed = partial(self._pressed, name)
            button.when_released = partial(self._released, name)
            button.when_held = partial(self._held, name)

    # -- buttons: callbacks only update timing state and put events on the queue --

    def _put(self, name: str, kind: str, at: float) -> None:
        self.events.put(PanelEvent(name, kind, at))

    def _pressed(self, name: str) -> None:
        now = self._clock()
        with self._lock:
            contact = self._contacts[name]
            contact.down_at = now
            contact.long_sent = False
            contact.chatter = now < contact.quiet_until

    def _held(self, name: str) -> None:
        now = self._clock()
        with self._lock:
            contact = self._contacts[name]
            if contact.down_at is None or contact.chatter or contact.long_sent:
                return
            contact.long_sent = True
            self._put(name, "long_press", now)

    def _released(self, name: str) -> None:
        now = self._clock()
        with self._lock:
            contact = self._contacts[name]
            down_at, contact.down_at = contact.down_at, None
            if down_at is None:
                return
            if contact.chatter:
                contact.chatter = False
                return
            held = now - down_at
            if held < self.config.bounce_s:
                return  # a glitch or a bounce before the real closure
            contact.quiet_until = now + self.config.bounce_s
            if contact.long_sent:
                return
            kind = "long_press" if held >= self.config.long_press_s else "press"
            self._put(name, kind, now)

    def get_event(self, timeout: float | None = None) -> PanelEvent | None:
        """The next event, waiting up to ``timeout`` seconds; ``None`` if none came."""
        try:
            return self.events.get(timeout=timeout)
        except queue.Empty:
            return None

    # -- status LED --

    def led_on(self) -> None:
        """Light the status LED steadily (stops any blink)."""
        self.status_led.on()

    def led_off(self) -> None:
        """Turn the status LED off (stops any blink)."""
        self.status_led.off()

    def led_blink(self, speed: str = "slow", *, n: int | None = None, wait: bool = False) -> None:
        """Blink the status LED ``n`` times (forever if ``None``) at ``"slow"`` or ``"fast"``.

        Blocks until done if ``wait`` (needs ``n``). Raises :class:`ValueError`
        for an unknown speed, or ``wait`` without ``n``.
        """
        if speed not in self.SPEEDS:
            raise ValueError(f"unknown blink speed {speed!r}; expected 'slow' or 'fast'")
        if wait and n is None:
            raise ValueError("led_blink(wait=True) needs n: a blink forever never returns")
        t = self.config.slow_blink_s if speed == "slow" else self.config.fast_blink_s
        self.status_led.blink(on_time=t, off_time=t, n=n, background=not wait)

    # -- buzzer --

    def beep(self, *, wait: bool = False) -> None:
        """Sound one short beep (``beep_s``); blocks until done if ``wait``."""
        self.buzzer.beep(on_time=self.config.beep_s, off_time=self.config.beep_s, n=1, background=not wait)

    def error_buzz(self, *, wait: bool = False) -> None:
        """Sound the error pattern: three ``error_buzz_s`` bursts; blocks if ``wait``."""
        t = self.config.error_buzz_s
        self.buzzer.beep(on_time=t, off_time=t, n=3, background=not wait)

    def close(self) -> None:
        """Stop patterns, release every pin; safe to call twice."""
        # gpiozero joins each button's hold thread in turn, and an idle one only
        # notices its stop flag on a 0.1 s poll; wake all seven at once first.
        # (Private gpiozero attributes, hence the getattr: without them, close is
        # merely slower.)
        buttons = self._named.get("buttons")
        if buttons is not None and not buttons.closed:
            for button in buttons.all:
                thread = getattr(button, "_hold_thread", None)
                if thread is not None:
                    thread.stopping.set()
                    thread.holding.set()
        super().close()
