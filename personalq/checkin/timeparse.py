"""Time expressions in requests, turned into windows relative to a reference date ("now").

A month without a year ("the April dog") means April of any year: which April is exactly what a
clarification question can settle. Explicit dates go through ``dateparser``; windows, seasons and
relative phrases are ours, because dateparser returns instants, not ranges.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass

import dateparser

from personalq.checkin.tokens import REQUEST_LANGUAGES, is_english

MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
MONTHS["sept"] = 9


def _months_of_request_languages() -> dict[str, int]:
    """The months' names in the other languages requests come in, from dateparser's locale data ("giugno", "junho",
    "juillet", "октября"): only whole names of five letters or more that English does not use, so no short form or
    name ("mai", "juli") reads as a month."""
    from dateparser.languages import default_loader

    found: dict[str, int] = {}
    for language in (*REQUEST_LANGUAGES, "ru"):
        info = default_loader.get_locale(language).info
        for month, english in enumerate(calendar.month_name):
            for name in info.get(english.lower(), []) if english else []:
                name = name.lower()
                if len(name) >= 5 and name.isalpha() and name not in MONTHS and not is_english(name):
                    found.setdefault(name, month)
    return found


_FOREIGN_MONTHS = _months_of_request_languages()
MONTHS.update(_FOREIGN_MONTHS)
SEASONS = {"spring": (3, 5), "summer": (6, 8), "autumn": (9, 11), "fall": (9, 11), "winter": (12, 2)}
_MONTH = (
    r"(?P<month>january|february|march|april|may|june|july|august|september|october|november|december|"
    r"jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec|"
    + "|".join(sorted(_FOREIGN_MONTHS, key=len, reverse=True))
    + ")"
)
_YEAR = r"(?:'(?P<short>\d{2})|(?P<year>(?:19|20)\d{2}))"
FIRST_CHECKPOINT_YEAR = 2015  # no year before this dates a checkpoint
# "may" and "march" are also verbs, and a month's short form is often a name ("girls' frontline aug", "jan"): only
# read them as months next to a year or a date-ish word
_AMBIGUOUS_MONTHS = {"may", "march", "sept"} | {name.lower() for name in calendar.month_abbr if name}
_DATEISH_BEFORE = re.compile(
    r"(?:\b(?:in|from|of|since|during|the|last|this|early|late|mid|until|before|after|between|and|or|to)\s+|"
    r"\b(?:early|late|mid)-)$",
    re.I,
)
_DATEISH_AFTER = re.compile(
    r"^\s*(?:\d|'|model|checkpoint|lora|version|build|one|ones|dog|cat|\w+\s+(?:model|one|checkpoint|lora))", re.I
)
_SEASON_DATE_BEFORE = re.compile(
    r"\b(?:from|since|during|last|this|early|late|mid|until|before|after|past|trained|made|created)\s+(?:the\s+)?$",
    re.I,
)
# "the one I trained in summer": the date of a model, though "in" comes between
_MADE_IN = re.compile(r"\b(?:trained|made|created|uploaded|downloaded|got|added)\s+(?:in|during)\s+(?:the\s+)?$", re.I)
_ORDINAL_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"


@dataclass(frozen=True)
class Window:
    start: dt.datetime
    end: dt.datetime  # exclusive
    label: str

    def contains(self, when: dt.datetime | None) -> bool:
        return when is not None and self.start <= when < self.end


@dataclass
class TimeFound:
    windows: list[Window]
    span: tuple[int, int]


def _month_window(year: int, month: int) -> Window:
    start = dt.datetime(year, month, 1)
    end = dt.datetime(year + (month == 12), month % 12 + 1, 1)
    return Window(start, end, f"{calendar.month_name[month]} {year}")


def _day_window(day: dt.date, label: str | None = None) -> Window:
    start = dt.datetime(day.year, day.month, day.day)
    return Window(start, start + dt.timedelta(days=1), label or f"{start:%B %-d, %Y}")


def _years(now: dt.datetime, back: int = 6) -> range:
    return range(now.year - back, now.year + 1)


def _year_of(match: re.Match) -> int | None:
    if match.group("year"):
        return int(match.group("year"))
    if match.groupdict().get("short"):
        return 2000 + int(match.group("short"))
    return None


def _season_windows(season: str, year: int | None, now: dt.datetime) -> list[Window]:
    first, last = SEASONS[season]
    out = []
    for y in [year] if year else _years(now):
        if first <= last:
            start, end = dt.datetime(y, first, 1), _month_window(y, last).end
        else:  # winter spans the new year: December of y-1 .. February of y
            start, end = dt.datetime(y - 1, 12, 1), _month_window(y, 2).end
        if start <= now:
            out.append(Window(start, end, f"{season} {y}"))
    return out


def _month_ok(text: str, match: re.Match) -> bool:
    word = match.group("month").lower()
    if word not in _AMBIGUOUS_MONTHS or match.groupdict().get("year") or match.groupdict().get("short"):
        return True
    return bool(_DATEISH_BEFORE.search(text[: match.start()]) or _DATEISH_AFTER.match(text[match.end() :]))


class _Found:
    """The expressions found so far: a later one is kept only where it overlaps none of them, so the readers
    below run from the most specific expression ("2025-04-11") to the most general ("2025")."""

    def __init__(self) -> None:
        self.found: list[TimeFound] = []
        self.taken: list[tuple[int, int]] = []

    def free(self, a: int, b: int) -> bool:
        return all(b <= s or a >= e for s, e in self.taken)

    def add(self, windows: list[Window], span: tuple[int, int]) -> None:
        if windows and self.free(*span):
            self.found.append(TimeFound(windows, span))
            self.taken.append(span)


def _midnight(now: dt.datetime) -> dt.datetime:
    return dt.datetime(now.year, now.month, now.day)


def _iso_dates(lowered: str, now: dt.datetime, found: _Found) -> None:
    """ "2025-04-11" (that day), "2025-04" (that month)."""
    for m in re.finditer(r"\b(?P<y>(?:19|20)\d{2})-(?P<m>\d{1,2})-(?P<d>\d{1,2})\b", lowered):
        try:
            found.add([_day_window(dt.date(int(m["y"]), int(m["m"]), int(m["d"])))], m.span())
        except ValueError:
            pass
    for m in re.finditer(r"\b(?P<y>(?:19|20)\d{2})-(?P<m>\d{1,2})\b", lowered):
        if 1 <= int(m["m"]) <= 12:
            found.add([_month_window(int(m["y"]), int(m["m"]))], m.span())


def _month_ranges(lowered: str, now: dt.datetime, found: _Found) -> None:
    """ "between March and May 2025", "from Jan to Mar", "March-May"."""
    for m in re.finditer(
        rf"\b(?:between|from)?\s*(?P<a>{_MONTH[10:-1]})\s*(?:and|to|through|until|-|–)\s*{_MONTH}(?:\s+{_YEAR})?\b",
        lowered,
    ):
        a, b = MONTHS[m["a"]], MONTHS[m["month"]]
        year = _year_of(m)
        windows = []
        for y in [year] if year else _years(now):
            start = dt.datetime(y if a <= b else y - 1, a, 1)
            end = _month_window(y, b).end
            if start <= now:
                windows.append(Window(start, end, f"{calendar.month_abbr[a]}–{calendar.month_abbr[b]} {y}"))
        found.add(windows, m.span())


def _explicit_days(lowered: str, now: dt.datetime, found: _Found) -> None:
    """ "April 11", "April 11th, 2025", "11 April 2025": explicit days through dateparser."""
    day_patterns = (
        rf"\b{_MONTH}\s+{_ORDINAL_DAY}(?:,?\s+{_YEAR})?\b",
        rf"\b{_ORDINAL_DAY}\s+(?:of\s+)?{_MONTH}(?:,?\s+{_YEAR})?\b",
        rf"\b{_ORDINAL_DAY}\s+(?:de|di)\s+{_MONTH}(?:\s+(?:de|del)\s+{_YEAR})?\b",  # "6 de marzo", "3 di giugno"
    )
    for pattern in day_patterns:
        for m in re.finditer(pattern, lowered):
            if not _month_ok(lowered, m) and not m.group("day"):
                continue
            year = _year_of(m)
            parsed = dateparser.parse(
                m.group(0),
                settings={"RELATIVE_BASE": now, "PREFER_DATES_FROM": "past", "REQUIRE_PARTS": ["day", "month"]},
            )
            if parsed is None:
                continue
            if year is None:  # a day without a year: that day in any year
                found.add(_day_in(_years(now), parsed.month, parsed.day, now), m.span())
            else:
                found.add([_day_window(parsed.date())], m.span())
    # Chinese and Japanese write a day as month 月 day 日 (号), its year before it as 年: "1月3日", "2023年3月6日"
    for m in _CJK_DAY.finditer(lowered):
        years = [int(m["year"])] if m["year"] else _years(now)
        found.add(_day_in(years, int(m["month"]), int(m["day"]), now), m.span())


def _day_in(years: Iterable[int], month: int, day: int, now: dt.datetime) -> list[Window]:
    """That day of each of ``years`` up to ``now``; none where the date does not exist ("February 30")."""
    windows = []
    for year in years:
        try:
            date = dt.date(year, month, day)
        except ValueError:
            continue
        if dt.datetime(year, month, day) <= now:
            windows.append(_day_window(date))
    return windows


_CJK_DAY = re.compile(r"(?:(?P<year>(?:19|20)\d{2})\s*年\s*)?(?P<month>\d{1,2})\s*月\s*(?P<day>\d{1,2})\s*[日号號]")


_PART_OF_MONTH = re.compile(r"\b(?P<part>early|mid|late)(?:\s+|-)(?:in\s+)?$")
PARTS_OF_MONTH = {"early": (1, 11), "mid": (11, 21), "late": (21, None)}  # days: first, and the one after the last


def _part_of(window: Window, part: str) -> Window:
    """ "late June 2023": the month's last third (from the 21st), "early" its first ten days, "mid" the ten between."""
    first, after = PARTS_OF_MONTH[part]
    start = window.start.replace(day=first)
    end = window.end if after is None else window.start.replace(day=after)
    return Window(start, end, f"{part} {window.label}")


_LAST_BEFORE = re.compile(r"\blast\s+$")
_WHICH_YEAR_AFTER = re.compile(r"^\s+(?:of\s+)?(?P<which>last|this)\s+year\b")


def _months(lowered: str, now: dt.datetime, found: _Found) -> None:
    """ "April" (any April so far), "April 2025", "Apr '25", "October last year", "last April" (the most recent one
    before this month), "late June" (its last third)."""
    for m in re.finditer(rf"\b{_MONTH}(?:\s+(?:of\s+)?{_YEAR})?\b", lowered):
        if not _month_ok(lowered, m):
            continue
        month, year = MONTHS[m["month"]], _year_of(m)
        start, end = m.span()
        if year is None and (which := _WHICH_YEAR_AFTER.match(lowered[end:])):
            year, end = now.year - (which["which"] == "last"), end + which.end()
        elif year is None and (last := _LAST_BEFORE.search(lowered[:start])):
            year, start = now.year - (month >= now.month), last.start()
        windows = [
            _month_window(y, month) for y in ([year] if year else _years(now)) if dt.datetime(y, month, 1) <= now
        ]
        part = _PART_OF_MONTH.search(lowered[:start])
        if part is not None:
            windows = [w for w in (_part_of(w, part["part"]) for w in windows) if w.start <= now]
            start = part.start()
        found.add(windows, (start, end))


def _describes_scene(text: str, match: re.Match) -> bool:
    """A season word without a year describes the picture ("a winter forest", "walking down a paris street in
    autumn", "..., autumn, soft watercolor"), unless a date cue comes before it ("from summer", "last winter",
    "trained in winter") or what follows is the model ("my winter lora", "the summer one")."""
    before = text[: match.start()]
    if _year_of(match) is not None or _SEASON_DATE_BEFORE.search(before) or _MADE_IN.search(before):
        return False
    return not _DATEISH_AFTER.match(text[match.end() :])


def _seasons(lowered: str, now: dt.datetime, found: _Found) -> None:
    """ "summer", "winter 2024", "fall of '23"; not "a winter forest"."""
    for m in re.finditer(rf"\b(?P<season>spring|summer|autumn|fall|winter)(?:\s+(?:of\s+)?{_YEAR})?\b", lowered):
        if not _describes_scene(lowered, m):
            found.add(_season_windows(m["season"], _year_of(m), now), m.span())


def _relative_phrases(lowered: str, now: dt.datetime, found: _Found) -> None:
    """ "yesterday", "last week", "this month", "last year" and their possessives."""
    today = _midnight(now)
    relative = {
        r"\bthe day before yesterday\b": lambda: [
            _day_window((today - dt.timedelta(days=2)).date(), "the day before yesterday")
        ],
        r"\byesterday(?:'s)?\b": lambda: [_day_window((today - dt.timedelta(days=1)).date(), "yesterday")],
        r"\btoday(?:'s)?\b": lambda: [_day_window(today.date(), "today")],
        r"\blast week(?:'s)?\b": lambda: [
            Window(
                today - dt.timedelta(days=today.weekday() + 7), today - dt.timedelta(days=today.weekday()), "last week"
            )
        ],
        r"\bthis week(?:'s)?\b": lambda: [
            Window(today - dt.timedelta(days=today.weekday()), today + dt.timedelta(days=1), "this week")
        ],
        r"\blast month(?:'s)?\b": lambda: [_month_window(now.year - (now.month == 1), (now.month - 2) % 12 + 1)],
        r"\bthis month(?:'s)?\b": lambda: [_month_window(now.year, now.month)],
        r"\blast year(?:'s)?\b": lambda: [
            Window(dt.datetime(now.year - 1, 1, 1), dt.datetime(now.year, 1, 1), f"{now.year - 1}")
        ],
        r"\bthis year(?:'s)?\b": lambda: [
            Window(dt.datetime(now.year, 1, 1), dt.datetime(now.year + 1, 1, 1), f"{now.year}")
        ],
    }
    for pattern, windows in relative.items():
        for m in re.finditer(pattern, lowered):
            found.add(windows(), m.span())


def _ago_phrases(lowered: str, now: dt.datetime, found: _Found) -> None:
    """ "three days ago", "a week ago", "2 months ago": that day, week (Monday to Sunday) or calendar month."""
    today = _midnight(now)
    for m in re.finditer(
        r"\b(?:(?P<n>\d+|a|one|two|three|four|five|six)\s+(?P<unit>day|week|month)s?\s+ago)\b", lowered
    ):
        n = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}.get(m["n"], None) or int(m["n"])
        if m["unit"] == "day":
            found.add([_day_window((today - dt.timedelta(days=n)).date(), m.group(0))], m.span())
        elif m["unit"] == "week":
            start = today - dt.timedelta(days=7 * n + today.weekday())
            found.add([Window(start, start + dt.timedelta(days=7), m.group(0))], m.span())
        else:
            y, mo = divmod(now.year * 12 + now.month - 1 - n, 12)
            found.add([_month_window(y, mo + 1)], m.span())


def _recent_spans(lowered: str, now: dt.datetime, found: _Found) -> None:
    """ "in the past 3 weeks", "last 10 days": from that long ago up to today."""
    today = _midnight(now)
    for m in re.finditer(r"\b(?:in the )?(?:past|last)\s+(?P<n>\d+)\s+(?P<unit>day|week|month)s\b", lowered):
        days = int(m["n"]) * {"day": 1, "week": 7, "month": 31}[m["unit"]]
        found.add([Window(today - dt.timedelta(days=days), today + dt.timedelta(days=1), m.group(0))], m.span())


def _bare_years(lowered: str, now: dt.datetime, found: _Found) -> None:
    """ "2021", "from 2021", "2021's": the whole year. A year still to come is part of a name ("blade runner 2049",
    "cyberpunk 2077"), and one long before any checkpoint is the picture's ("a street in 1952", "the fritz lang 1927
    look"): nothing was made then."""
    for m in re.finditer(rf"\b(?:(?:in|from|during|of|since)\s+)?{_YEAR}(?:'s)?(?=\W|$)", lowered):
        year = _year_of(m)
        if year and FIRST_CHECKPOINT_YEAR <= year <= now.year:
            found.add([Window(dt.datetime(year, 1, 1), dt.datetime(year + 1, 1, 1), str(year))], m.span())


# most specific first: an expression a reader keeps is not read again, in part, by a later one
_READERS = (
    _iso_dates,
    _month_ranges,
    _explicit_days,
    _months,
    _seasons,
    _relative_phrases,
    _ago_phrases,
    _recent_spans,
    _bare_years,
)


def find_times(text: str, now: dt.datetime) -> list[TimeFound]:
    """Every time expression in ``text`` with its windows (alternatives) and character span."""
    lowered = text.lower()
    found = _Found()
    for read in _READERS:
        read(lowered, now, found)
    return sorted(found.found, key=lambda f: f.span)
