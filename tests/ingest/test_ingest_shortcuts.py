"""The parser's shortcuts give exactly what the general path gives.

* span times in the SDK's form (``YYYY-MM-DDTHH:MM:SS.ffffffZ``) skip ``fromisoformat`` once their
  second has been parsed: the microseconds and the workbench's time key must still be those of
  ``datetime.fromisoformat`` (docs/rules.md#span-records), for every string, cached second or not;
* the lone-surrogate pre-check looks for a backslash first: it must still say yes exactly when a
  \\udXXX escape is there.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from hypothesis import example, given
from hypothesis import strategies as st

from groundwork.core import jsontext
from groundwork.core.jsontext import TimeProblem, iso_times, may_hold_surrogate

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def workbench_time(value: str):
    """What the workbench computes (docs/rules.md#span-records): fromisoformat with Z read as +00:00, the moment in
    microseconds, and the double it orders spans by; the error kind when it cannot."""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return "bad-time"
    if moment.tzinfo is None:
        return "naive-time"
    return (moment - EPOCH) // timedelta(microseconds=1), moment.timestamp() * 1e9


def ours(value: str):
    try:
        return iso_times(value)
    except TimeProblem as exc:
        return exc.kind


moments = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(timezone.utc))


def sdk_form(moment: datetime) -> str:
    return moment.isoformat(timespec="microseconds").replace("+00:00", "Z")


@given(moments, st.integers(0, 999_999))
def test_sdk_times_equal_fromisoformat_before_and_after_their_second_is_cached(moment, micro):
    first = sdk_form(moment)
    same_second = first[:20] + f"{micro:06d}" + "Z"
    for value in (first, same_second, first):  # the second and third calls take the shortcut
        got = ours(value)
        assert got == workbench_time(value)
        assert type(got[0]) is int


# Strings that share a cached second but are not the SDK's form: each must get what
# fromisoformat gives (a value, or the very error kind), never a shortcut result.
@given(moments, st.text(alphabet="0123456789Z.+-:T ٣", min_size=8, max_size=8))
@example(datetime(2026, 10, 1, tzinfo=timezone.utc), "123456+0")   # an offset in place of Z
@example(datetime(2026, 10, 1, tzinfo=timezone.utc), ".12345٣Z")    # an Arabic-Indic digit
@example(datetime(2026, 10, 1, tzinfo=timezone.utc), ".123456Z")    # nothing where '.' goes
@example(datetime(2026, 10, 1, tzinfo=timezone.utc), "1234567Z")
def test_strings_sharing_a_cached_second_are_read_as_fromisoformat_reads_them(moment, tail):
    prefix = sdk_form(moment)[:19]
    ours(prefix + ".000000Z")  # caches the second
    value = prefix + tail
    assert ours(value) == workbench_time(value)


def test_invalid_dates_in_the_sdk_form_are_bad_times():
    for value in ("2026-02-30T00:00:00.000000Z", "2026-13-01T00:00:00.000000Z", "2026-10-01T24:00:00.000000Z",
                  "2026-10-01T23:60:00.000000Z", "0000-01-01T00:00:00.000000Z"):
        assert ours(value) == "bad-time" == workbench_time(value)


def test_the_cache_of_seconds_stays_bounded():
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    for i in range(10_000):
        iso_times(sdk_form(start + timedelta(seconds=i)))
    assert len(jsontext._SECONDS) <= 4096


SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


@given(st.text(alphabet='\\udDe8bAF0"x é', max_size=30))
@example("\\ud800")
@example("\\uD83D\\uDE00")
@example("\\u00e9 and \\\\ud")
def test_surrogate_precheck_says_yes_exactly_when_an_escape_is_there(text):
    expected = SURROGATE.search(text) is not None
    assert may_hold_surrogate(text) is expected
    assert may_hold_surrogate(text.encode("utf-8")) is expected
