"""``statbench.api.records_digest`` (cache keys of plugins, corpus checksums): fields joined by
NUL and records ended by \\x01 read alike when a field holds one of those characters itself,
so two different sequences of records shared a digest (a wrong cache hit). A field holding
one is now written escaped; every field without one digests exactly as before (recorded data
checksums and cache keys are unchanged)."""

from __future__ import annotations

import hashlib

from statbench.api import records_digest


def test_a_separator_inside_a_field_is_not_a_boundary():
    assert records_digest([("a\0b",)]) != records_digest([("a", "b")])
    assert records_digest([("a\1b",)]) != records_digest([("a",), ("b",)])
    assert records_digest([("a\0", "b")]) != records_digest([("a", "\0b")])
    assert records_digest([("a\2", "b")]) != records_digest([("a\2\2", "b")])
    assert records_digest([("\2a",)]) != records_digest([("\2\2a",)])


def test_fields_without_a_separator_digest_as_before():
    records = [("d1", "title", "text é"), ("d2", "", "")]
    before = hashlib.sha256("".join("\0".join(r) + "\1" for r in records).encode("utf-8")).hexdigest()
    assert records_digest(records) == before


def test_many_escaped_spellings_stay_distinct():
    fields = ["", "\0", "\1", "\2", "\0\0", "\2\0", "\0\2", "a\1", "\1a", "\2\2", "x"]
    digests = {records_digest([(a, b)]) for a in fields for b in fields}
    assert len(digests) == len(fields) ** 2
