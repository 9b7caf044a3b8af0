"""Text from outside (files, command lines, typed lines) read with bounds, for every package.

Owns :func:`parse_json` (JSON nested at most :data:`MAX_JSON_DEPTH` deep, whole numbers of at
most :data:`MAX_DIGITS` digits, no NaN or Infinity), :func:`whole_number` (ASCII digits only,
as ``int()`` would also take ``"\u0663"``), :func:`read_text` (a file read up to a size cap
before any of it is decoded, so ``/dev/zero`` or a huge file is refused, not read) and
:func:`check_output` (an output path that cannot be written, found before the work).
Besides :mod:`board_rules.cli` the one module here that touches files: the loaders of
``vision``, ``firmware_bridge`` and ``referee`` share it, and they may import only
``board_rules``. Every error is the caller's family (``error=``), :class:`InputError` by default.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from board_rules.errors import TavliError

MAX_JSON_DEPTH = 32  # Position JSON nests 2 deep, a geometry 3, an observation 4
MAX_DIGITS = 30  # a whole number in JSON: a count, a seed, a pixel; never a 4,300-digit one
MAX_TEXT_BYTES = 1 << 20  # a position, geometry, palette or profile file is some kilobytes


class InputError(TavliError, ValueError):
    """Text from outside that is not what it should be: the message names the field and the value."""


def _shown(text: str, width: int = 60) -> str:
    """``text`` quoted, cut to ``width`` characters."""
    return repr(text if len(text) <= width else text[: width - 3] + "...")


class _Refused(ValueError):
    pass


def _whole(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise _Refused(f"a number of {len(text.lstrip('-'))} digits")
    return int(text)


def _constant(text: str) -> float:
    raise _Refused(f"{text} is no JSON number")


def parse_json(text: str | bytes, what: str, error: type[Exception] = InputError) -> Any:
    """``text`` parsed as JSON; raises ``error(message)`` naming ``what`` for text that is not JSON,
    nests deeper than :data:`MAX_JSON_DEPTH`, holds a whole number over :data:`MAX_DIGITS` digits,
    NaN or Infinity, or bytes that are not UTF-8.

    >>> parse_json('{"a": [1, 2.5]}', "x")
    {'a': [1, 2.5]}
    >>> parse_json("[" * 40 + "]" * 40, "x")
    Traceback (most recent call last):
    board_rules.untrusted.InputError: x: nested more than 32 deep: not what it should be
    """
    try:
        data = json.loads(text, parse_int=_whole, parse_constant=_constant)
    except RecursionError:
        raise error(f"{what}: nested more than {MAX_JSON_DEPTH} deep: not what it should be") from None
    except _Refused as exc:
        raise error(f"{what}: {exc}: not what it should be") from None
    except UnicodeDecodeError as exc:
        raise error(f"{what}: not UTF-8 text (byte {exc.start})") from None
    except ValueError as exc:  # JSONDecodeError, and what json refuses besides
        raise error(f"{what}: not valid JSON ({exc})") from None
    _check_depth(data, what, error)
    return data


def _check_depth(data: Any, what: str, error: type[Exception]) -> None:
    stack = [(data, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        elif not isinstance(item, list):
            continue
        if depth > MAX_JSON_DEPTH:
            raise error(f"{what}: nested more than {MAX_JSON_DEPTH} deep: not what it should be")
        stack.extend((v, depth + 1) for v in item)


def whole_number(text: str, what: str, low: int, high: int, error: type[Exception] = InputError) -> int:
    """``text`` as a whole number ``low``..``high`` written in ASCII digits (a leading ``-`` where
    ``low`` < 0); raises ``error(message)`` naming ``what`` and the text for anything else.

    >>> whole_number("12", "--games", 1, 10_000)
    12
    >>> whole_number("\u00b2", "--games", 1, 10_000)
    Traceback (most recent call last):
    board_rules.untrusted.InputError: --games: '²' must be a whole number 1..10000
    """
    t = text.strip() if isinstance(text, str) else ""
    digits = t[1:] if t.startswith("-") and low < 0 else t
    if digits.isascii() and digits.isdigit() and len(digits) <= len(str(max(abs(low), abs(high)))):
        value = int(t)
        if low <= value <= high:
            return value
    raise error(f"{what}: {_shown(text) if isinstance(text, str) else repr(text)} must be a whole number {low}..{high}")


def is_digits(text: str, most: int = 9) -> bool:
    """Whether ``text`` is 1..``most`` ASCII digits (``"²"`` and ``"\u0663"`` are not)."""
    return isinstance(text, str) and 0 < len(text) <= most and text.isascii() and text.isdigit()


def read_text(
    path: str | os.PathLike,
    what: str,
    error: type[Exception] = InputError,
    limit: int = MAX_TEXT_BYTES,
) -> str:
    """The UTF-8 text of the file at ``path``, read up to ``limit`` bytes before it is decoded.

    Raises ``error(message)`` naming ``what`` and the path for a file that is missing, a folder,
    unreadable, over ``limit`` bytes (``/dev/zero`` is), or not UTF-8.
    """
    shown = repr(str(path))
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise error(f"{what}: {shown}: cannot read it ({exc.strerror or exc})") from None
    except ValueError as exc:  # a NUL in the path
        raise error(f"{what}: {shown}: cannot read it ({exc})") from None
    if len(data) > limit:
        raise error(f"{what}: {shown}: over {limit} bytes: not what it should be")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{what}: {shown}: not UTF-8 text (byte {exc.start})") from None


def read_json(
    path: str | os.PathLike,
    what: str,
    error: type[Exception] = InputError,
    limit: int = MAX_TEXT_BYTES,
) -> Any:
    """:func:`read_text` then :func:`parse_json`; raises ``error(message)`` naming ``what`` and the path."""
    return parse_json(read_text(path, what, error, limit), f"{what}: {str(path)!r}", error)


def check_output(path: str | os.PathLike, what: str, error: type[Exception] = InputError) -> Path:
    """``path`` once it is known a file can be written there (its folder exists and takes a new
    file; an existing file is left as it is). Raises ``error(message)`` naming ``what`` and the
    path for a folder, a missing folder, or a place nothing can be written (``/proc``)."""
    p = Path(path)
    shown = repr(str(path))
    if p.is_dir():
        raise error(f"{what}: {shown} is a folder: name a file")
    existed = p.exists()
    try:
        fd = os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o644)
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise error(f"{what}: {shown}: cannot write there ({reason})") from None
    os.close(fd)
    if not existed:
        os.unlink(p)
    return p


def check_output_folder(path: str | os.PathLike, what: str, error: type[Exception] = InputError) -> Path:
    """``path`` as a folder, made where it is missing, once a file can be written in it.

    Raises ``error(message)`` naming ``what`` and the path for a file, or a place where no folder
    or file can be made."""
    p = Path(path)
    shown = repr(str(path))
    try:
        p.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise error(f"{what}: {shown} is a file: name a folder") from None
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise error(f"{what}: {shown}: cannot make a folder there ({reason})") from None
    probe = p / f".tavli-write-check-{os.getpid()}"
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        os.unlink(probe)
    except OSError as exc:
        raise error(f"{what}: {shown}: cannot write in it ({exc.strerror or exc})") from None
    return p
