"""Retrying an API request on rate limits and transient failures.

HTTP 429 and 5xx answers and connection errors are retried up to ``max_retries`` times;
the wait is the server's ``Retry-After`` when it sends a readable one (RFC 9110: whole
seconds, or an HTTP date; a date in the past means now), else exponential backoff (1, 2,
4 ... seconds, capped at 60). A server asking for more than 60 s (an hour, a date years
ahead) stops the run at once with one line: retrying sooner than asked would only be
refused again, and the answers already received are cached for the next run. Any other
failure, or the last retry's, is one line naming the provider and the HTTP status.

One request, every attempt and wait included, has one overall bound (:func:`overall_bound`,
``STATBENCH_API_TIMEOUT`` seconds, default :data:`OVERALL_WAIT`): the SDKs' own timeout
bounds one network read, so a server trickling its answer, or many retries, could wait
without end. Past the bound (or when the next wait would pass it) the run stops with one
line naming the provider and the bound."""

from __future__ import annotations

import datetime as _dt
import email.utils
import logging
import re
import time
from dataclasses import dataclass
from typing import Callable, Mapping, TypeVar

from statbench.api import DeadlinePassed, StatbenchError, bound_from_env, call_within

T = TypeVar("T")
log = logging.getLogger("statbench")
MAX_WAIT = 60.0
#: Seconds one request may take, every attempt and wait included (``STATBENCH_API_TIMEOUT``).
OVERALL_WAIT = 600.0
TIMEOUT_ENV = "STATBENCH_API_TIMEOUT"

#: The waiting function (tests record the waits instead of sleeping).
sleep: Callable[[float], None] = time.sleep


@dataclass(frozen=True)
class Failure:
    """How a provider's exception reads: its HTTP status (None for a connection error),
    the headers sent with it and a short message."""

    status: int | None
    headers: Mapping[str, str]
    message: str

    @property
    def transient(self) -> bool:
        return self.status is None or self.status == 429 or 500 <= self.status <= 599


_SECONDS = re.compile(r"[0-9]+")


def retry_after(headers: Mapping[str, str]) -> float | None:
    """The wait a ``Retry-After`` header asks for, in seconds, never negative (None when
    absent or unreadable: ``-5``, ``1e9``, ``inf``, ``soon``, an impossible date)."""
    value = next((str(v) for k, v in (headers or {}).items() if str(k).lower() == "retry-after"), None)
    if value is None:
        return None
    value = value.strip()
    if _SECONDS.fullmatch(value):
        return float(int(value)) if len(value) <= 15 else 1e15  # (a thousand years and more: "never")
    try:
        when = email.utils.parsedate_to_datetime(value)
        if when.tzinfo is None:
            when = when.replace(tzinfo=_dt.timezone.utc)
        seconds = (when - _dt.datetime.now(_dt.timezone.utc)).total_seconds()
    except (TypeError, ValueError, OverflowError, IndexError):
        log.info("unreadable Retry-After header %r: backing off instead", value[:80])
        return None
    return max(seconds, 0.0)


def _duration(seconds: float) -> str:
    if seconds < 3600:
        return f"{seconds:.0f} s"
    if seconds < 86400 * 2:
        return f"{seconds / 3600:.1f} hours"
    return f"{seconds / 86400:,.0f} days"


def backoff(attempt: int) -> float:
    return min(2.0 ** attempt, MAX_WAIT)


def overall_bound() -> float:
    """The overall bound on one request, in seconds (``STATBENCH_API_TIMEOUT``)."""
    return bound_from_env(TIMEOUT_ENV, OVERALL_WAIT)


def with_retries(owner: str, target: str, call: Callable[[], T], classify: Callable[[BaseException], Failure | None],
                 max_retries: int, stats: dict | None = None, bound: float | None = None) -> T:
    """``call()``, retried as the module says, within ``bound`` seconds overall (default:
    :func:`overall_bound`). ``classify`` turns a provider exception into a
    :class:`Failure`, or None for one that is not an API failure (re-raised as it is)."""
    bound = overall_bound() if bound is None else bound
    deadline = time.monotonic() + bound
    attempt = 0

    def past_bound(what: str) -> StatbenchError:
        return StatbenchError(f"{owner}: {target} {what} ({TIMEOUT_ENV}=SECONDS waits longer); answers already "
                              "received are cached: run again later")

    while True:
        try:
            return call_within(max(deadline - time.monotonic(), 0.0), call, f"request to {target}")
        except DeadlinePassed:
            tries = f" ({attempt + 1} attempts)" if attempt else ""
            raise past_bound(f"did not answer within {bound:g} s{tries}, every attempt and wait included") from None
        except StatbenchError:
            raise
        except Exception as exc:  # noqa: BLE001 - SDK errors come in many types
            failure = classify(exc)
            if failure is None:
                raise
        what = f"HTTP {failure.status}" if failure.status is not None else "connection error"
        if not failure.transient or attempt >= max_retries:
            tries = f" after {attempt + 1} attempts" if failure.transient else ""
            raise StatbenchError(f"{owner}: {target} answered {what}{tries}: {failure.message}")
        wait = retry_after(failure.headers)
        if wait is not None and wait > MAX_WAIT:
            raise StatbenchError(f"{owner}: {target} answered {what} and asks to wait {_duration(wait)} "
                                 f"(Retry-After), more than the {MAX_WAIT:.0f} s statbench waits: run again later "
                                 "(answers already received are cached)")
        wait = backoff(attempt) if wait is None else wait
        if time.monotonic() + wait > deadline:
            raise past_bound(f"answered {what}; retrying in {wait:g} s would pass the bound of {bound:g} s on one "
                             "request, every attempt and wait included")
        log.info("%s: %s from %s; retrying in %.1f s (retry %d of %d)", owner, what, target, wait, attempt + 1,
                 max_retries)
        if stats is not None:
            stats["api_retries"] = stats.get("api_retries", 0) + 1
        sleep(wait)
        attempt += 1
