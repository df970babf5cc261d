"""The results reader's fast parse (orjson, for cold leaderboard builds of thousands of files)
gives exactly the careful parse's verdict and value on every input: the same object, or a
refusal (then the careful parse, with its exact message, is what the caller sees)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from statbench.errors import DataFormatError
from statbench.results.record import _UNSURE, _parse_checked, _parse_fast, parse_strict, read_results
from repo_paths import REPO_ROOT

ROOT = REPO_ROOT


def _careful(data: bytes):
    try:
        return "ok", _parse_checked(data.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        return "refused", type(exc).__name__


def _strict(data: bytes):
    try:
        return "ok", parse_strict(data)
    except (ValueError, RecursionError) as exc:
        return "refused", type(exc).__name__


def _same(data: bytes) -> None:
    careful, strict = _careful(data), _strict(data)
    assert careful[0] == strict[0], data
    if careful[0] == "ok":
        # the same values, the same types (an int stays an int), floats to the bit
        assert json.dumps(careful[1], sort_keys=True) == json.dumps(strict[1], sort_keys=True), data
        assert repr(careful[1]) == repr(strict[1])
    fast = _parse_fast(data)
    if fast is not _UNSURE:  # the fast parse only ever answers what the careful one answers
        assert careful[0] == "ok" and repr(fast) == repr(careful[1]), data


@pytest.mark.parametrize("text", [
    '{"a": 1, "a": 2}',  # a duplicate key: orjson keeps the last one silently
    '{"a": {"b": 1}, "a": {"b": 1}}',
    '{"x": {"a": 1, "b": 2, "a": 1}}',
    '{"a": "\\u003a", "a": 1}',  # a colon spelled as an escape, beside a duplicate
    '{"a\\u003Ab": 1, "a\\u003Ab": 1}',
    '{"k:v": ":::", "k:v": 1}',
    '[12345678901234567890]',  # beyond 64 bits: orjson reads a float
    '[-9223372036854775809]',
    '{"n": 18446744073709551616}',
    '[0.0025252525252525255]',  # a fraction's 19 digits: read alike
    '[1234567890123456789.5]',
    '[1e400]', '[-1e400]', '[NaN]', '[Infinity]', '[-Infinity]',
    '["\\ud800"]', '["\\ud83d\\ude00"]',
    '\ufeff{}', '{"a": 1}x', '', '[1,]', '[01]', '[.5]', '{"a":-0}', '[-0.0]', '[1e-400]',
    '{"a": "\x01"}', '{"time": "2026-11-25T20:10:00+00:00", "cmd": "a:b"}',
    "[" * 5000 + "]" * 5000,
])
def test_fast_and_careful_parse_agree_on_hostile_texts(text):
    _same(text.encode("utf-8", "surrogatepass"))


def test_duplicate_key_is_still_refused_with_its_name(tmp_path):
    path = tmp_path / "results.json"
    path.write_text('{"aggregate": {}, "aggregate": {}}')
    with pytest.raises(DataFormatError, match="duplicate key 'aggregate'"):
        read_results(path)


def test_big_integer_is_read_as_the_integer(tmp_path):
    assert parse_strict(b'{"n": 123456789012345678901}') == {"n": 123456789012345678901}
    assert type(parse_strict(b"[98765432109876543210]")[0]) is int


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10**25), max_value=10**25)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(alphabet=st.characters(blacklist_categories=("Cs",))),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4),
    max_leaves=25,
)


@settings(max_examples=400, deadline=None)
@given(value=json_values, ensure_ascii=st.booleans(), indent=st.sampled_from([None, 1, 2]))
def test_fast_parse_agrees_on_any_json(value, ensure_ascii, indent):
    _same(json.dumps(value, ensure_ascii=ensure_ascii, indent=indent).encode())


@settings(max_examples=400, deadline=None)
@given(pairs=st.lists(st.tuples(st.sampled_from(["a", "b", "a:b", "\\u003a"]), st.integers(0, 3)), min_size=1,
                      max_size=5),
       nested=st.booleans())
def test_fast_parse_agrees_on_objects_with_repeated_keys(pairs, nested):
    body = "{" + ", ".join(f'"{key}": {value}' for key, value in pairs) + "}"
    _same((f'{{"outer": {body}}}' if nested else body).encode())


@settings(max_examples=300, deadline=None)
@given(x=st.floats(allow_nan=False, allow_infinity=False), digits=st.integers(1, 40))
def test_fast_parse_reads_every_float_spelling_alike(x, digits):
    for spelled in (repr(x), f"{x:.{digits}e}", f"{x:.{digits}f}" if abs(x) < 1e30 else repr(x)):
        if math.isfinite(float(spelled)):
            _same(f"[{spelled}]".encode())


def test_committed_results_read_alike_by_both_parses():
    files = sorted(p for folder in ("results", "results-stard-subset", "unverified") for p in (ROOT / "bench" / folder).rglob("results.json"))
    assert files
    for path in files:
        raw = path.read_bytes()
        assert repr(parse_strict(raw)) == repr(_parse_checked(raw.decode("utf-8"))), path
        assert _parse_fast(raw) is not _UNSURE, path  # the committed files take the fast path


# --- the schema check's shortcut: maps of scores checked by a plain loop ------------------------

_BAD_SCORES = [True, None, "0.5", [0.5], {"x": 0.5}]


def _sample_record() -> dict:
    from statbench.leaderboard.sample import make_results

    per_query = {f"q{i}": {"R@5": i / 10, "R@10": i / 8, "R@100": 1.0, "nDCG@10": i / 9} for i in range(6)}
    groups = {"x": ["q0", "q2", "q4"], "y": ["q1", "q3", "q5"]}
    breakdown = {"topic": {value: {m: sum(per_query[q][m] for q in qids) / 3 for m in per_query["q0"]}
                           for value, qids in groups.items()}}
    record = make_results(per_query, splits={"a": ["q0", "q1", "q2"], "b": ["q3", "q4", "q5"]}, breakdown=breakdown)
    assert record.get("breakdown") and len(record["splits"]) == 2
    return record


@settings(max_examples=300, deadline=None)
@given(where=st.sampled_from(["per_query", "breakdown", "all_queries", "splits", "aggregate", "top"]),
       bad=st.sampled_from(_BAD_SCORES), pick=st.integers(0, 10**6))
def test_schema_shortcut_gives_the_validators_verdict(where, bad, pick):
    from statbench.results.record import _validator, schema_errors

    record = _sample_record()
    if where == "per_query":
        scores = list(record["per_query"].values())[pick % 6]
    elif where == "breakdown":
        groups = list(record["breakdown"].values())[0]
        scores = list(groups.values())[pick % len(groups)]
    elif where == "all_queries":
        scores = record["all_queries"]
    elif where == "splits":
        scores = record["splits"][pick % 2]["scores"]
    elif where == "aggregate":  # not a map of scores: the validator's own
        scores = list(record["aggregate"].values())[pick % 4]
    else:
        scores = record
    key = sorted(scores)[pick % len(scores)]
    if where == "top" and key in ("per_query", "breakdown", "all_queries", "splits", "aggregate", "measures"):
        key = "command"  # a whole table replaced is the cases above, not this one
    scores[key] = bad
    full = sorted(f"{list(e.absolute_path)}: {e.message}" for e in _validator().iter_errors(record))
    assert full or where == "top", (where, key)  # a bad score is a schema violation
    assert bool(schema_errors(record)) == bool(full)
    assert len(schema_errors(record)) == len(full)
    assert schema_errors(_sample_record()) == []
