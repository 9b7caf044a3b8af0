"""The event stream: every event of a table, numbered, to whoever subscribes.

Owns :class:`EventStream` (publish an event, get it back :class:`~referee.events.Stamped`
with its sequence number; each subscriber is called in the order it subscribed) and the
sinks the table loop subscribes: the journal, the LEDs, the buzzer and the terminal. A
live page or a broker subscribes the same way. Sinks take their device injected
(a journal, a board link, a panel, a ``say`` function); nothing here opens one.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from datetime import UTC, datetime

from referee import events as E
from referee.journal import JournalWriteError

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
    """Appends the record events to a :class:`~referee.journal.Journal` (flushed and synced each).

    An event the disk refuses (:class:`~referee.journal.JournalWriteError`) is kept in
    :attr:`pending`, in order, with the time it happened; every later publish, and
    :meth:`retry`, writes the pending events first, oldest first, so none is lost or
    reordered. :attr:`error` is the last refusal while events are pending (None once
    they are all written).
    """

    def __init__(self, journal) -> None:
        self.journal = journal
        self.pending: deque[tuple[E.Event, str]] = deque()
        self.error: JournalWriteError | None = None

    def __call__(self, item: E.Stamped) -> None:
        if item.event.journaled:
            self.pending.append((item.event, self.journal.now()))
        if self.pending:
            self.retry()

    def retry(self) -> bool:
        """Write the pending events, oldest first, until the disk refuses one; True when none is left."""
        while self.pending:
            event, at = self.pending[0]
            try:
                self.journal.append(event, at)
            except JournalWriteError as exc:
                self.error = exc
                return False
            self.pending.popleft()
        self.error = None
        return True


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
