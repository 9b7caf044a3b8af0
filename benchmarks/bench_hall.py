"""Load test of a hall (not a test): many tables on one broker, the dashboard open in chromium.

Run ``.venv/bin/python benchmarks/bench_hall.py [--tables 100] [--seconds 60]`` (or ``make
bench-hall``). A mosquitto with the shipped config, password file and ACL on 127.0.0.1 at a
free port; ``--tables`` tables, each a real referee, table loop and publisher, replaying
the recorded 3-point match ``tests/data/demo-match-3.jsonl`` by typed lines (board, roll,
end, double, take), one action every ``--interval`` seconds, started at random moments; the
hall and its dashboard in headless chromium. Printed: tables shown, events published and
received per table (every one must arrive), action -> dashboard card updated p50/p99
(stamped in the page by a MutationObserver; both ends read the system's wall clock; the
tables run in a process of their own, as in a hall each is a machine), and the broker's CPU time and memory. Target: p99 under 500 ms. Loopback only.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_board import pct  # noqa: E402
from bench_page import FLAGS  # noqa: E402

from referee.broker import BrokerAddress, TablePublisher  # noqa: E402
from referee.hall import Hall, HallPage  # noqa: E402
from referee.loop import TableSession  # noqa: E402
from referee.session import Referee  # noqa: E402
from referee.spec import MatchSpec  # noqa: E402
from tests.mosquitto import Broker  # noqa: E402

RECORD = ROOT / "tests" / "data" / "demo-match-3.jsonl"
TARGET_MS = 500.0

WATCH = """() => {
  const log = window.__hall = [];
  new MutationObserver(records => {
    const now = Date.now();
    for (const r of records) {
      const el = r.target;
      if (el.dataset && el.dataset.table) log.push([el.dataset.table, Number(el.dataset.viewSeq), now]);
    }
  }).observe(document.getElementById("grid"), { subtree: true, attributes: true, attributeFilter: ["data-view-seq"] });
}"""


def typed_lines(path: Path) -> list[str]:
    """The keyboard lines that play the recorded match again, action by action."""
    lines: list[str] = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        e = json.loads(raw)
        kind = e["type"]
        if kind == "game_start":
            lines.append("board start")
        elif kind == "opening_roll":
            lines.append(f"opening {e['white']} {e['black']}")
        elif kind == "roll":
            lines.append(f"roll {e['dice'][0]} {e['dice'][1]}")
        elif kind == "play":
            lines.append("board " + json.dumps(e["after"], separators=(",", ":")))
            lines.append("end")
        elif kind == "cube" and e["action"] in ("double", "take", "pass"):
            lines.append(e["action"])
    return lines


class SimTable:
    """A table replaying the record: a real referee, loop and publisher, driven from a thread."""

    def __init__(self, n: int, broker: Broker, folder: Path, lines: list[str], interval: float) -> None:
        self.id = f"sim-{n}"
        spec = MatchSpec("match", 3, "backgammon")
        self.ref = Referee.new(folder / f"{self.id}.jsonl", spec, white="Alice", black="Bob")
        self.session = TableSession(self.ref, say=lambda text: None)
        self.publisher = TablePublisher(
            self.ref, BrokerAddress.parse(broker.url(self.id)), "bench", self.id, say=lambda text: None
        )
        self.lines, self.interval = lines, interval
        self.actions: list[tuple[int, float]] = []  # (view seq after the action, wall clock ms at the action)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self, offset: float) -> None:
        self.publisher.start()
        self.offset = offset
        self.thread.start()

    def _run(self) -> None:
        if self.stop.wait(self.offset):
            return
        for line in self.lines:
            t0 = time.time() * 1000
            before = self.ref.stream.seq
            self.session.command(line)
            if self.ref.stream.seq != before:
                self.actions.append((self.ref.stream.seq, t0))
            if self.stop.wait(self.interval):
                return

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=5)
        self.publisher.close(timeout=10)
        self.ref.close()


def _proc_usage(pid: int) -> tuple[float, int]:
    """(CPU seconds, resident KB) of process ``pid``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    rss = next(
        int(line.split()[1])
        for line in Path(f"/proc/{pid}/status").read_text().splitlines()
        if line.startswith("VmRSS")
    )
    return cpu, rss


def run_tables(port: int, folder: Path, tables: int, seconds: float, interval: float, out: Path) -> None:
    """The tables' process: ``tables`` replaying tables for ``seconds``; their actions and journals' lengths to ``out``."""
    broker = Broker.__new__(Broker)
    broker.port = port
    lines = typed_lines(RECORD)
    sims = [SimTable(n, broker, folder, lines, interval) for n in range(tables)]
    rng = random.Random(20261126)
    for sim in sims:
        sim.start(rng.uniform(0, interval))
    time.sleep(seconds)
    for sim in sims:
        sim.close()
    result = {sim.id: {"actions": sim.actions, "events": _lines(sim)} for sim in sims}
    out.write_text(json.dumps(result), encoding="utf-8")


def run(tables: int, seconds: float, interval: float, folder: Path, chromium: str) -> dict:
    """The hall's process: broker, hall, dashboard in chromium; the tables run in a process of their own
    (in a hall they are machines of their own: one process would measure the tables' contention, not the hall)."""
    from playwright.sync_api import sync_playwright

    broker = Broker(folder).start()
    cpu0, _ = _proc_usage(broker.proc.pid)
    hall = Hall(BrokerAddress.parse(broker.url("hall")), "bench", folder / "hall", say=lambda text: None).start()
    page = HallPage(hall, port=0).start()
    out = folder / "tables.json"
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, headless=True, args=FLAGS)
            tab = browser.new_page()
            tab.goto(page.url)
            tab.evaluate(WATCH)
            t_start = time.perf_counter()
            sim = subprocess.run(
                [sys.executable, __file__, "--tables-process", str(broker.port), str(folder), str(out)]
                + ["--tables", str(tables), "--seconds", str(seconds), "--interval", str(interval)],
                timeout=seconds + 120,
            )
            if sim.returncode != 0:
                raise RuntimeError(f"the tables' process failed ({sim.returncode})")
            time.sleep(3)  # the last actions reach the page
            shown = tab.locator("[data-table]").count()
            log = tab.evaluate("window.__hall")
            browser.close()
        elapsed = time.perf_counter() - t_start
        cpu1, rss = _proc_usage(broker.proc.pid)
        done = json.loads(out.read_text(encoding="utf-8"))
        deadline = time.monotonic() + 20
        while True:
            missing = [t for t, d in done.items() if t not in hall.tables or hall.tables[t].last_seq < d["events"]]
            if not missing or time.monotonic() > deadline:
                break
            time.sleep(0.2)
    finally:
        page.stop()
        hall.stop()
        broker.stop()
    by_table: dict[str, list[tuple[int, float]]] = {}
    for table, seq, at in log:
        by_table.setdefault(table, []).append((seq, at))
    latencies = []
    for table, d in done.items():
        seen = by_table.get(table, [])
        for seq, t0 in d["actions"]:
            hit = next((at for s, at in seen if s >= seq), None)
            if hit is not None:
                latencies.append(hit - t0)
    return {
        "tables": tables,
        "shown": shown,
        "actions": sum(len(d["actions"]) for d in done.values()),
        "measured": len(latencies),
        "events": sum(d["events"] for d in done.values()),
        "received": sum(min(hall.tables[t].last_seq, d["events"]) for t, d in done.items() if t in hall.tables),
        "missing": missing,
        "p50": pct(latencies, 50) if latencies else float("nan"),
        "p99": pct(latencies, 99) if latencies else float("nan"),
        "broker_cpu_s": cpu1 - cpu0,
        "broker_rss_kb": rss,
        "seconds": elapsed,
    }


def _lines(sim: SimTable) -> int:
    try:
        return len(Path(sim.ref.journal.path).read_bytes().splitlines())
    except OSError:
        return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between one table's actions")
    parser.add_argument("--tables-process", nargs=3, metavar=("PORT", "FOLDER", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.tables_process:
        port, folder, out = args.tables_process
        run_tables(int(port), Path(folder), args.tables, args.seconds, args.interval, Path(out))
        return 0
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("bench_hall: chromium is needed (apt install chromium)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        r = run(args.tables, args.seconds, args.interval, Path(tmp), chromium)
    print(f"hall: {r['tables']} tables on one mosquitto for {r['seconds']:.0f} s, the dashboard in chromium")
    print(f"  tables shown on the dashboard   {r['shown']} of {r['tables']}")
    print(
        f"  events published / received     {r['events']} / {r['received']} (missing tables: {r['missing'] or 'none'})"
    )
    print(f"  actions / measured on the page  {r['actions']} / {r['measured']}")
    print(
        f"  action -> dashboard card        p50 {r['p50']:.0f} ms, p99 {r['p99']:.0f} ms (target p99 < {TARGET_MS:.0f} ms;"
        " same clock)"
    )
    print(
        f"  broker                          {r['broker_cpu_s']:.2f} s CPU, {r['broker_rss_kb'] / 1024:.1f} MB resident"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
