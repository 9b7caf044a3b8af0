"""The Raspberry Pi panel on gpiozero's MockFactory: config, presses, debounce, LED, buzzer.

No Pi and no sleeps: button timing runs on an injected clock; the one test of
gpiozero's hold thread waits on the event queue with a timeout.
"""

from __future__ import annotations

import queue
import re

import pytest
from gpiozero import Button
from gpiozero.pins.mock import MockFactory

from board_rules.errors import TavliError
from firmware_bridge.panel import (
    ACTIONS,
    BUTTONS,
    DEFAULT_CONFIG_PATH,
    KINDS,
    Panel,
    PanelConfig,
    PanelConfigError,
    PanelEvent,
)

VALID_TOML = """\
[buttons]
end_turn = 17
double = 27
take = 22
pass = 23
resign = 24
hint = 25
undo = 5

[outputs]
status_led = 6
buzzer = 26

[timing]
bounce_s = 0.05
long_press_s = 1.0
slow_blink_s = 0.02
fast_blink_s = 0.005
beep_s = 0.005
error_buzz_s = 0.005
"""


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def factory():
    f = MockFactory()
    yield f
    f.reset()


@pytest.fixture
def config(tmp_path) -> PanelConfig:
    path = tmp_path / "panel.toml"
    path.write_text(VALID_TOML)
    return PanelConfig.load(path)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def panel(config, factory, clock):
    p = Panel(config, pin_factory=factory, clock=clock)
    yield p
    p.close()


def press(factory, clock, pin: int, held: float) -> None:
    """Close the contact on ``pin`` for ``held`` seconds of the fake clock."""
    factory.pin(pin).drive_low()
    clock.advance(held)
    factory.pin(pin).drive_high()


def no_event(panel: Panel) -> bool:
    try:
        event = panel.events.get(timeout=0.02)
    except queue.Empty:
        return True
    pytest.fail(f"unexpected event {event}")


def write_config(tmp_path, text: str):
    path = tmp_path / "panel.toml"
    path.write_text(text)
    return path


def states(pin) -> list[bool]:
    return [bool(s.state) for s in pin.states]


# -- config ------------------------------------------------------------------


def test_default_config_file_names_every_button_on_distinct_pins():
    config = PanelConfig.load(DEFAULT_CONFIG_PATH)
    assert set(config.buttons) == set(BUTTONS)
    pins = [*config.buttons.values(), config.status_led, config.buzzer]
    assert len(set(pins)) == len(pins) == 9
    assert config.long_press_s == 1.0 and config.bounce_s == 0.05


def test_config_is_frozen(config):
    with pytest.raises(AttributeError):
        config.buzzer = 4  # type: ignore[misc]
    with pytest.raises(TypeError):
        config.buttons["undo"] = 4  # type: ignore[index]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("hint = 25\n", "", r"\[buttons\] is missing 'hint'"),
        ("undo = 5\n", "undo = 5\nmenu = 4\n", r"unknown button 'menu'"),
        ("undo = 5\n", "undo = 28\n", r"\[buttons\] undo = 28 is not a BCM GPIO.*2\.\.27"),
        ("undo = 5\n", "undo = 1\n", r"\[buttons\] undo = 1 is not a BCM GPIO"),
        ("undo = 5\n", "undo = -3\n", r"\[buttons\] undo = -3 is not a BCM GPIO"),
        ("undo = 5\n", 'undo = "5"\n', r"\[buttons\] undo = '5' is not a BCM GPIO number"),
        ("undo = 5\n", "undo = true\n", r"\[buttons\] undo = True is not a BCM GPIO number"),
        ("undo = 5\n", "undo = 17\n", r"\[buttons\] undo = 17 is already used by \[buttons\] end_turn"),
        ("buzzer = 26\n", "buzzer = 6\n", r"\[outputs\] buzzer = 6 is already used by \[outputs\] status_led"),
        ("buzzer = 26\n", "", r"\[outputs\] is missing 'buzzer'"),
        ("bounce_s = 0.05\n", "bounce_s = 2.0\n", r"bounce_s = 2\.0 must be shorter than long_press_s = 1\.0"),
        ("beep_s = 0.005\n", "beep_s = -1\n", r"\[timing\] beep_s = -1 is not a usable time"),
        ("beep_s = 0.005\n", "beep = 0.1\n", r"unknown key 'beep' in \[timing\]"),
        ("[outputs]", "[output]", r"unknown table \[output\]"),
    ],
)
def test_config_errors_name_the_key_and_value(tmp_path, old, new, message):
    assert old in VALID_TOML
    path = write_config(tmp_path, VALID_TOML.replace(old, new, 1))
    with pytest.raises(PanelConfigError, match=message) as info:
        PanelConfig.load(path)
    assert str(path) in str(info.value)
    assert isinstance(info.value, TavliError) and isinstance(info.value, ValueError)


def test_config_file_missing_or_not_toml(tmp_path):
    with pytest.raises(PanelConfigError, match=r"does not exist"):
        PanelConfig.load(tmp_path / "nope.toml")
    path = write_config(tmp_path, "[buttons\nend_turn = 17\n")
    with pytest.raises(PanelConfigError, match=r"not valid TOML"):
        PanelConfig.load(path)


def test_config_without_buttons_table(tmp_path):
    path = write_config(tmp_path, "[outputs]\nstatus_led = 6\nbuzzer = 26\n")
    with pytest.raises(PanelConfigError, match=r"the \[buttons\] table is missing"):
        PanelConfig.load(path)


# -- events ------------------------------------------------------------------


def test_panel_event_round_trips_and_validates():
    event = PanelEvent("resign", "long_press", 12.5)
    assert str(event) == "resign long_press 12.5"
    assert PanelEvent.parse(str(event)) == event
    assert event.action == "cycle_resignation_level"
    with pytest.raises(ValueError, match=r"'menu'"):
        PanelEvent("menu", "press", 0.0)
    with pytest.raises(ValueError, match=r"'double_click'"):
        PanelEvent("undo", "double_click", 0.0)
    with pytest.raises(ValueError, match=r"not a panel event"):
        PanelEvent.parse("undo press")


def test_every_button_and_kind_has_an_action():
    assert set(ACTIONS) == {(b, k) for b in BUTTONS for k in KINDS}
    assert ACTIONS["undo", "long_press"] == "undo_play"
    assert ACTIONS["end_turn", "long_press"] == ACTIONS["end_turn", "press"]


# -- the composites ----------------------------------------------------------


def test_panel_is_named_composites_on_the_configured_pins(panel, config, factory):
    assert panel.buttons.pass_ is panel.buttons.button("pass")
    for name in BUTTONS:
        button = panel.buttons.button(name)
        assert isinstance(button, Button)
        assert button.pin is factory.pin(config.buttons[name])
        assert button.pull_up
    assert panel.status_led.pin is factory.pin(config.status_led)
    assert panel.buzzer.pin is factory.pin(config.buzzer)
    assert not panel.status_led.is_lit and not panel.buzzer.is_active


def test_close_releases_pins_and_may_be_called_twice(config, factory):
    panel = Panel(config, pin_factory=factory)
    panel.close()
    panel.close()
    assert panel.closed
    # the pins are free again: a second panel opens them
    Panel(config, pin_factory=factory).close()


# -- presses, debounce, long press ------------------------------------------


@pytest.mark.parametrize("name", BUTTONS)
def test_each_button_press_yields_a_press_event_with_its_name(panel, config, factory, clock, name):
    press(factory, clock, config.buttons[name], held=0.2)
    event = panel.events.get(timeout=1)
    assert event == PanelEvent(name, "press", clock.now)
    assert no_event(panel)


def test_press_is_decided_at_release(panel, config, factory, clock):
    pin = factory.pin(config.buttons["double"])
    pin.drive_low()
    clock.advance(0.3)
    assert panel.events.empty()
    pin.drive_high()
    assert panel.events.get(timeout=1).kind == "press"


def test_bounce_shorter_than_debounce_is_ignored(panel, config, factory, clock):
    press(factory, clock, config.buttons["take"], held=0.049)
    assert no_event(panel)


def test_press_of_exactly_the_bounce_time_counts(panel, config, factory, clock):
    press(factory, clock, config.buttons["take"], held=config.bounce_s)
    assert panel.events.get(timeout=1) == PanelEvent("take", "press", clock.now)


def test_bounces_before_the_real_closure_give_one_press(panel, config, factory, clock):
    pin = config.buttons["hint"]
    for _ in range(3):
        press(factory, clock, pin, held=0.002)
        clock.advance(0.001)
    press(factory, clock, pin, held=0.3)
    assert panel.events.get(timeout=1) == PanelEvent("hint", "press", clock.now)
    assert no_event(panel)


def test_release_chatter_after_a_press_is_ignored(panel, config, factory, clock):
    pin = config.buttons["resign"]
    press(factory, clock, pin, held=0.3)
    assert panel.events.get(timeout=1).kind == "press"
    # the contact chatters for 40 ms after release, once long enough to pass as a press
    clock.advance(0.001)
    press(factory, clock, pin, held=0.002)
    clock.advance(0.001)
    factory.pin(pin).drive_low()
    clock.advance(0.06)
    factory.pin(pin).drive_high()
    assert no_event(panel)
    # a real second press after the quiet time counts
    clock.advance(0.2)
    press(factory, clock, pin, held=0.2)
    assert panel.events.get(timeout=1) == PanelEvent("resign", "press", clock.now)


def test_buttons_debounce_independently(panel, config, factory, clock):
    press(factory, clock, config.buttons["take"], held=0.2)
    press(factory, clock, config.buttons["pass"], held=0.2)  # straight after take
    assert [panel.events.get(timeout=1).button for _ in range(2)] == ["take", "pass"]


def test_just_below_long_press_is_a_press(panel, config, factory, clock):
    press(factory, clock, config.buttons["undo"], held=0.999)
    assert panel.events.get(timeout=1).kind == "press"


def test_holding_to_long_press_by_the_clock_gives_long_press_at_release(panel, config, factory, clock):
    press(factory, clock, config.buttons["undo"], held=1.0)
    event = panel.events.get(timeout=1)
    assert event == PanelEvent("undo", "long_press", clock.now)
    assert event.action == "undo_play"
    assert no_event(panel)


def test_long_press_fires_while_held_and_release_adds_nothing(config, factory):
    """gpiozero's hold thread (hold_time = long_press_s) fires before the release."""
    fast = config.replace(bounce_s=0.005, long_press_s=0.05)
    panel = Panel(fast, pin_factory=factory)  # real monotonic clock
    try:
        pin = factory.pin(fast.buttons["resign"])
        pin.drive_low()
        event = panel.events.get(timeout=2)
        assert (event.button, event.kind) == ("resign", "long_press")
        assert pin.state is False  # still held when it arrived
        pin.drive_high()
        assert no_event(panel)
        # the next contact starts afresh
        assert panel.buttons.resign.hold_time == 0.05
    finally:
        panel.close()


def test_events_go_to_an_injected_queue(config, factory, clock):
    events: queue.Queue = queue.Queue()
    panel = Panel(config, pin_factory=factory, clock=clock, events=events)
    try:
        press(factory, clock, config.buttons["end_turn"], held=0.1)
        assert events.get(timeout=1).button == "end_turn"
        assert panel.get_event(timeout=0.01) is None
    finally:
        panel.close()


# -- status LED and buzzer ---------------------------------------------------


def test_led_on_and_off_drive_the_pin(panel, config, factory):
    pin = factory.pin(config.status_led)
    panel.led_on()
    assert pin.state is True
    panel.led_off()
    assert pin.state is False


@pytest.mark.parametrize("speed", ["slow", "fast"])
def test_led_blink_n_times_drives_the_pin(panel, config, factory, speed):
    pin = factory.pin(config.status_led)
    pin.clear_states()
    panel.led_blink(speed, n=2, wait=True)
    assert states(pin) == [False, True, False, True, False]
    t = config.slow_blink_s if speed == "slow" else config.fast_blink_s
    on_times = [s.timestamp for s in pin.states[2::2]]  # time spent lit before each off
    assert all(on >= t * 0.9 for on in on_times)


def test_slow_blink_is_slower_than_fast(config):
    assert config.slow_blink_s > config.fast_blink_s


def test_blink_forever_stops_on_off(panel, config, factory):
    pin = factory.pin(config.status_led)
    panel.led_blink("fast")
    panel.led_off()
    pin.clear_states()
    assert pin.state is False
    assert states(pin) == [False]


def test_led_blink_rejects_bad_arguments(panel):
    with pytest.raises(ValueError, match=r"'medium'"):
        panel.led_blink("medium")
    with pytest.raises(ValueError, match=r"needs n"):
        panel.led_blink("slow", wait=True)


def test_beep_is_one_burst(panel, config, factory):
    pin = factory.pin(config.buzzer)
    pin.clear_states()
    panel.beep(wait=True)
    assert states(pin) == [False, True, False]


def test_error_buzz_is_three_bursts(panel, config, factory):
    pin = factory.pin(config.buzzer)
    pin.clear_states()
    panel.error_buzz(wait=True)
    assert states(pin) == [False, True, False, True, False, True, False]


def test_config_error_message_quotes_the_value(tmp_path):
    path = write_config(tmp_path, VALID_TOML.replace("undo = 5\n", "undo = 99\n"))
    with pytest.raises(PanelConfigError) as info:
        PanelConfig.load(path)
    assert re.search(r"undo = 99", str(info.value))
