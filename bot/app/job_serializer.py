"""How a queued job is stored: JSON of the job's own fields, never a pickle.

huey's default serializer pickles its task message, so whoever can write to the queue's Redis (or
its SQLite file) would run code in a worker that holds the App's private key. JobSerializer writes
one shape, the message of our one task, and reads back only that shape; anything else (a pickle,
JSON of another shape, another task's name, a job `job_from_dict` or the field types reject) raises
RefusedEntry, which the queue logs in one line and drops (bot/app/queue.py). Nothing here ever
unpickles or imports what it reads.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import types
import typing
from typing import Any

from huey.registry import Message
from huey.serializer import Serializer

from bot.app.jobspec import job_from_dict, job_to_dict
from bot.errors import ChartReviewError

FORMAT = 1
# A job is a few hundred bytes; a bigger entry is not one of ours, and is refused unparsed.
MAX_ENTRY_BYTES = 64 * 1024
PICKLE_PROTOCOL_MARK = 0x80  # the first byte of every pickle since protocol 2

# Message fields that are plain values, with what each may hold; args/kwargs carry the job, and
# the pipeline fields (on_complete, on_error, chord_config) must be empty: our task has none.
_INT, _NUMBER, _WHEN, _NULL = "an integer", "a number", "an ISO time without zone", "null"
_PLAIN_FIELDS = {
    "retries": (_INT,),
    "retry_delay": (_NUMBER,),
    "retry_backoff": (_NUMBER,),
    "priority": (_INT, _NULL),
    "timeout": (_NUMBER, _NULL),
    "eta": (_WHEN, _NULL),
    "expires": (_WHEN, _NULL),
    "expires_resolved": (_WHEN, _NULL),
}
_TIMES = [name for name, kinds in _PLAIN_FIELDS.items() if _WHEN in kinds]
_KEYS = {"format", "id", "task", "job", *_PLAIN_FIELDS}


class RefusedEntry(ChartReviewError):
    """A queue entry that is not a job this bot wrote: dropped, never run."""


class JobSerializer(Serializer):
    """huey's serializer for the message of the one task `task_name`."""

    def __init__(self, task_name: str) -> None:
        super().__init__()
        self.task_name = task_name

    def _serialize(self, data: object) -> bytes:
        if not isinstance(data, Message):
            raise TypeError(f"the job queue stores only task messages, not {type(data).__name__}")
        return json.dumps(self.encode(data), sort_keys=True).encode()

    def _deserialize(self, data: bytes) -> Message:
        return self.decode(_parse(data))

    def encode(self, message: Message) -> dict[str, Any]:
        if message.name != self.task_name:
            raise TypeError(f"the job queue runs only {self.task_name}, not {message.name}")
        if message.on_complete or message.on_error or message.chord_config:
            raise TypeError("a queued job has no pipeline (on_complete, on_error, chord)")
        encoded = {"format": FORMAT, "id": message.id, "task": message.name}
        encoded["job"] = checked_job(_job_argument(message.args, message.kwargs))
        for name, allowed in _PLAIN_FIELDS.items():
            value = getattr(message, name)
            _check_plain(name, value, allowed, error=TypeError)
            encoded[name] = value.isoformat() if isinstance(value, datetime.datetime) else value
        return encoded

    def decode(self, data: object) -> Message:
        if not isinstance(data, dict) or data.keys() != _KEYS:
            raise RefusedEntry(f"not a job message: {_shape(data)}")
        if data["format"] != FORMAT:
            raise RefusedEntry(f"unknown message format {data['format']!r:.40}")
        if data["task"] != self.task_name:
            raise RefusedEntry(f"unknown task {data['task']!r:.80}")
        if not isinstance(data["id"], str):
            raise RefusedEntry("message id is not a string")
        plain = {name: data[name] for name in _PLAIN_FIELDS}
        plain.update({name: _when(name, plain[name]) for name in _TIMES})
        for name, allowed in _PLAIN_FIELDS.items():
            _check_plain(name, plain[name], allowed, error=RefusedEntry)
        job = checked_job(data["job"])
        return Message(id=data["id"], name=data["task"], args=(job,), kwargs={}, **plain)


def checked_job(data: object) -> dict[str, Any]:
    """`data` as the queue stores it (the job's dict and its run id), or RefusedEntry."""
    if not isinstance(data, dict):
        raise RefusedEntry(f"job is not an object: {_shape(data)}")
    try:
        job = job_from_dict(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise RefusedEntry(f"job rejected ({type(exc).__name__}: {exc})"[:200]) from None
    _check_types(job)
    if job.crashes < 0:  # how many times the reaper re-queued it: a count
        raise RefusedEntry(f"job field crashes: {job.crashes} is not a count")
    run_id = data.get("id")
    if run_id is not None and not isinstance(run_id, str):
        raise RefusedEntry("job run id is not a string")
    canonical = job_to_dict(job)
    if run_id is not None:
        canonical["id"] = run_id
    return canonical


def _parse(data: bytes) -> object:
    if len(data) > MAX_ENTRY_BYTES:
        raise RefusedEntry(f"entry of {len(data)} bytes, over the {MAX_ENTRY_BYTES} a job may take")
    if data[:1] == bytes([PICKLE_PROTOCOL_MARK]):
        raise RefusedEntry(f"a pickle ({len(data)} bytes), not JSON; not unpickled")
    try:
        return json.loads(data, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError, nesting
        raise RefusedEntry(f"not JSON ({len(data)} bytes, starting {data[:16]!r})") from exc


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON number")


def _job_argument(args: object, kwargs: object) -> object:
    if kwargs or not isinstance(args, tuple | list) or len(args) != 1:
        raise TypeError("the job task takes one argument, the job's dict")
    return args[0]


def _check_plain(
    name: str, value: object, allowed: tuple[str, ...], error: type[Exception]
) -> None:
    if not any(_is(value, kind) for kind in allowed):
        raise error(f"message field {name}: {value!r:.40} is not {' or '.join(allowed)}")


def _is(value: object, kind: str) -> bool:
    if kind == _NULL:
        return value is None
    if kind == _WHEN:
        return isinstance(value, datetime.datetime) and value.tzinfo is None
    numbers = (int,) if kind == _INT else (int, float)
    return type(value) in numbers  # exactly: True is an int to isinstance


def _when(name: str, value: object) -> datetime.datetime | None:
    # huey compares naive datetimes (UTC by default), so an aware one is refused by _check_plain.
    if value is None:
        return None
    if not isinstance(value, str):
        raise RefusedEntry(f"message field {name}: {value!r:.40} is not an ISO time or null")
    try:
        return datetime.datetime.fromisoformat(value)
    except ValueError:
        raise RefusedEntry(f"message field {name}: {value!r:.40} is not an ISO time") from None


def _check_types(value: object) -> None:
    """Each field of the job (and of its RepoRef) holds the type its annotation says."""
    hints = typing.get_type_hints(type(value))
    for field in dataclasses.fields(value):  # type: ignore[arg-type]
        item = getattr(value, field.name)
        if not _matches(item, hints[field.name]):
            raise RefusedEntry(f"job field {field.name}: {item!r:.40} is not {hints[field.name]}")
        if dataclasses.is_dataclass(item):
            _check_types(item)


def _matches(value: object, hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return value in typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_matches(value, arg) for arg in typing.get_args(hint))
    if hint is type(None):
        return value is None
    return type(value) is hint  # exactly: a bool is no installation id, a subclass no RepoRef


def _shape(data: object) -> str:
    if isinstance(data, dict):
        return "an object with keys " + ", ".join(sorted(map(str, data)))[:120]
    return f"a JSON {type(data).__name__}"
