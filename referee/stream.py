"""The event stream: every event of a table, numbered, to whoever subscribes.

Owns :class:`EventStream` (publish an event, get it back :class:`~referee.events.Stamped`
with its sequence number; each subscriber is called in the order it subscribed) and the
sinks the table loop subscribes: the journal, the LEDs, the buzzer and the terminal. A
live page or a broker subscribes the same way. Sinks take their device injected
(a journal, a board link, a panel, a ``say`` function); nothing here opens one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime

from referee import events as E

Subscriber = Callable[[E.Stamped], None]


def _utc_now() -> datetime:
    return datetime.now(UTC)


class EventStream:
    """Numbered events to subscribers. ``clock`` stamps each event (an aware datetime; default UTC now)."""

    def __init__(self, clock: Callable[[], datetime] | None = None) -> None:
        self._subscribers: list[Subscriber] = []
        self._clock = clock or _utc_now
        self.seq = 0

    def subscribe(self, subscriber: Subscriber) -> Subscriber:
        """Call ``subscriber`` with every event published from now on; returns it (to unsubscribe)."""
        self._subscribers.append(subscriber)
        return subscriber

    def unsubscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.remove(subscriber)

    def publish(self, event: E.Event) -> E.Stamped:
        self.seq += 1
        stamped = E.Stamped(self.seq, self._clock().isoformat(timespec="milliseconds"), event)
        for subscriber in list(self._subscribers):
            subscriber(stamped)
        return stamped

    def publish_all(self, events: Iterable[E.Event]) -> list[E.Stamped]:
        return [self.publish(e) for e in events]


class JournalSink:
    """Appends the record events to a :class:`~referee.journal.Journal` (flushed and synced each)."""

    def __init__(self, journal) -> None:
        self.journal = journal

    def __call__(self, item: E.Stamped) -> None:
        if item.event.journaled:
            self.journal.append(item.event)


class LedSink:
    """Sends each LED frame the referee asks for to the sensor board (``link.send_leds``)."""

    def __init__(self, link, frame: Callable) -> None:
        self.link = link
        self.frame = frame  # firmware_bridge.leds.led_frame: places to colours -> LedFrame

    def __call__(self, item: E.Stamped) -> None:
        if isinstance(item.event, E.LedsLit):
            self.link.send_leds(self.frame(dict(item.event.leds)))


class BuzzerSink:
    """Sounds the panel's buzzer when a call asks for it."""

    def __init__(self, panel) -> None:
        self.panel = panel

    def __call__(self, item: E.Stamped) -> None:
        if isinstance(item.event, E.Called) and item.event.buzzer:
            self.panel.error_buzz()


class TerminalSink:
    """Says each of the referee's words as ``referee: ...``."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self.say = say

    def __call__(self, item: E.Stamped) -> None:
        if isinstance(item.event, E.Called):
            for text in item.event.says:
                self.say(f"referee: {text}")
