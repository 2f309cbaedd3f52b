import datetime as dt

import pytest
from pydantic import ValidationError

from personalq.repository.card import Card
from personalq.repository.versions import family_stem, parse_version


@pytest.mark.parametrize(
    "text, number, qualifiers",
    [
        ("v2.0_offset", 2.0, ("offset",)),
        ("[v1.0_PRUNED]", 1.0, ("pruned",)),
        ("Epoch 4", 4.0, ()),
        ("v3.0 (morden_pixel)", 3.0, ("morden", "pixel")),
        ("v1.3 dim16", 1.3, ("dim16",)),
        ("version 3", 3.0, ()),
        ("4", 4.0, ()),
        ("bear_v2-000004", 4.0, ()),
        ("final", None, ("final",)),
        ("Gothic style 2", 2.0, ("gothic", "style")),
        ("v1C", 1.0, ("c",)),
    ],
)
def test_parse_version(text, number, qualifiers):
    info = parse_version(text)
    assert info.number == number
    assert info.qualifiers == qualifiers


def test_version_order_is_numeric():
    labels = ["v10", "v2.0_offset", "v1.5", "v2.1"]
    assert sorted(labels, key=lambda v: parse_version(v).sort_key) == ["v1.5", "v2.0_offset", "v2.1", "v10"]
    assert parse_version("Epoch 4").is_epoch


@pytest.mark.parametrize(
    "name, stem",
    [("bear_v2-000004", "bear"), ("Teddy bear v4", "teddy-bear"), ("Ghibli Background v2.0", "ghibli-background")],
)
def test_family_stem(name, stem):
    assert family_stem(name) == stem


def test_card_derives_family_and_subjects():
    card = Card(id="bear-v4", name="Teddy bear v4", tags=["plush"], created_at="2025-04-11", triggers="<bear-v4>")
    assert card.family == "teddy-bear"
    assert card.subjects[:3] == ["plush", "teddy", "bear"]
    assert card.triggers == ["<bear-v4>"]
    assert card.created_at == dt.datetime(2025, 4, 11)


def test_card_normalises_timezones_and_kind_aliases():
    card = Card(id="x", name="x", created_at="2023-04-02T10:11:12.000Z", kind="LoCon")
    assert card.created_at == dt.datetime(2023, 4, 2, 10, 11, 12)
    assert card.kind == "lora"


@pytest.mark.parametrize(
    "fields",
    [
        {"name": "x", "created_at": "2025-01-01"},
        {"id": "x", "created_at": "2025-01-01"},
        {"id": "x", "name": "x"},
        {"id": "../etc", "name": "x", "created_at": "2025-01-01"},
        {"id": "x", "name": "x", "created_at": "yesterday"},
    ],
)
def test_card_rejects_missing_or_bad_fields(fields):
    with pytest.raises(ValidationError):
        Card(**fields)


def test_content_hash_ignores_last_used():
    a = Card(id="x", name="x", created_at="2025-01-01")
    b = Card(id="x", name="x", created_at="2025-01-01", last_used_at="2025-02-01")
    assert a.content_hash() == b.content_hash()
    assert a.content_hash() != Card(id="x", name="y", created_at="2025-01-01").content_hash()
