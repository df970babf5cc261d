"""A run's splits as the verified bytes of their cache entries.

Each split's cache entry holds its run lines exactly as the output ``run.trec`` holds them
(the output's tag included: the tag is fixed by the first stage, pool and reranker, which
key the entry), plus ``index.json``: each ranked query's byte range. The output run is
then assembled from the verified bytes, query blocks in query-id order, with nothing
formatted or parsed again: byte-identical to formatting the whole run at once
(:func:`statbench.data.runfile.format_run`). Rankings are parsed from the bytes only when
something asks for them (:class:`SplitRuns` is a mapping query id -> ranking).

Each split's per-query scores are cached too (:func:`scores_entry`), keyed by the sha256
of the split's run, the judgements of its test queries, the measures and the versions of
the harness and ir-measures: a cached run is scored without reading its rankings.

Proving a cached split run costs about what reading it costs: :func:`format_split` writes
only lines that pass :func:`check_split_run`, so its entries carry the writer's seal
(:data:`SEALED_CHECK`, see :meth:`statbench.storage.cache.CacheEntry.verify`): a digest of
the key and of every file's digest. Under a seal that holds, the check reads the index and
each block's bounds, not each line; an entry without the seal (written by another version)
is checked line by line; one whose seal does not hold (files edited, their digests
re-written) is rebuilt.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import BinaryIO, Iterator

from statbench.contract.records import Measure, Qrels, Ranking
from statbench.data.checksum import bytes_sha256, chunks_sha256
from statbench.data.runfile import run_tag, strictly_decreasing_at_float32
from statbench.scoring.measures import is_custom, parse_measure
from statbench.storage.cache import CacheChanged, CacheEntry
from statbench.storage.keys import split_scores_entry

RUN_FILE, INDEX_FILE, SCORES_FILE, STATS_FILE = "run.trec", "index.json", "scores.json", "stats.json"
#: what a split run's seal vouches for: the lines pass :func:`check_split_run` in full. Change
#: it whenever that check changes, so that entries sealed before are checked line by line again.
SEALED_CHECK = "split-run lines, check 1"


def format_split(rankings: Mapping[str, Ranking], tag: str) -> tuple[bytes, list[list]]:
    """The run lines of ordered ``rankings`` (query ids sorted, as ``format_run`` writes
    them) and the index ``[[qid, start, end], ...]`` of each query's block (empty blocks
    included: a query the model found nothing for)."""
    end = f" {run_tag(tag)}\n"
    parts: list[bytes] = []
    index: list[list] = []
    offset = 0
    for qid in sorted(rankings):
        head = f"{qid} Q0 "
        block = "".join([f"{head}{doc_id} {rank} {score!r}{end}"
                         for rank, (doc_id, score) in enumerate(rankings[qid], start=1)]).encode("utf-8")
        parts.append(block)
        index.append([qid, offset, offset + len(block)])
        offset += len(block)
    return b"".join(parts), index


def write_split(staging: Path, rankings: Mapping[str, Ranking], tag: str) -> tuple[bytes, list[list]]:
    data, index = format_split(rankings, tag)
    (staging / RUN_FILE).write_bytes(data)
    (staging / INDEX_FILE).write_text(json.dumps(index, ensure_ascii=False), "utf-8")
    return data, index


class SplitRun:
    """One split's run: its verified bytes, the byte range of each query, and (when this
    process computed it) the rankings themselves."""

    def __init__(self, name: str, entry: CacheEntry, data: bytes, index: list[list],
                 rankings: dict[str, Ranking] | None = None, sha256: str | None = None):
        self.name, self.entry, self.data, self.index = name, entry, data, index
        self._rankings = rankings
        self.sha256 = sha256 or bytes_sha256(data)

    @classmethod
    def read(cls, name: str, entry: CacheEntry) -> SplitRun:
        """From a verified entry: the bytes its verification hashed (kept, see
        :func:`statbench.run.runcache.split_run_entry`), or each file checked against the
        manifest as it is read."""
        data = entry.read_bytes(RUN_FILE)
        index = json.loads(entry.read_bytes(INDEX_FILE).decode("utf-8"))
        return cls(name, entry, data, index, sha256=entry.kept_sha256(RUN_FILE))

    @property
    def query_ids(self) -> list[str]:
        return [qid for qid, _, _ in self.index]

    def ranked(self) -> set[str]:
        """The queries with at least one ranked document."""
        return {qid for qid, start, end in self.index if end > start}

    def blocks(self) -> Iterator[tuple[str, memoryview]]:
        view = memoryview(self.data)
        for qid, start, end in self.index:
            yield qid, view[start:end]

    def rankings(self) -> dict[str, Ranking]:
        """query id -> [(doc id, score)], in rank order (parsed once, from bytes this harness
        wrote and the manifest verified)."""
        if self._rankings is None:
            parsed: dict[str, Ranking] = {}
            for qid, start, end in self.index:
                lines = self.data[start:end].decode("utf-8").splitlines()
                parsed[qid] = [(cols[2], float(cols[4])) for cols in (line.split(" ") for line in lines)]
            self._rankings = parsed
        return self._rankings


class SplitRuns(Mapping):
    """The runs of a run's splits: a mapping query id -> ranking (parsed on demand) that can
    also write the output run (:meth:`write_output`) without formatting anything.
    A query tested by two splits takes the later split's ranking, as ``dict.update`` would."""

    def __init__(self, runs: list[SplitRun]):
        self.runs = list(runs)
        self._owner: dict[str, SplitRun] = {}
        for run in self.runs:
            for qid in run.query_ids:
                self._owner[qid] = run

    def __getitem__(self, qid: str) -> Ranking:
        return self._owner[qid].rankings()[qid]

    def __iter__(self):
        return iter(self._owner)

    def __len__(self) -> int:
        return len(self._owner)

    def write_output(self, handle: BinaryIO) -> str:
        """Write the whole run to ``handle`` as :func:`statbench.data.runfile.write_run`
        would, block by block (the run is never joined into one more copy in memory); its
        sha256."""
        blocks: dict[str, memoryview] = {}
        for run in self.runs:
            blocks.update(run.blocks())

        def written() -> Iterator[memoryview]:
            for qid in sorted(blocks):
                handle.write(blocks[qid])
                yield blocks[qid]

        return chunks_sha256(written())


def check_split_run(entry: CacheEntry) -> str | None:
    """Whether a split-run entry's files hold what its key says (``None``) or why not: an
    index of contiguous byte ranges over the whole run, one block per query of the split's
    test queries (sorted, each once), lines ``QID Q0 DOC RANK SCORE TAG`` with the key's tag,
    ranks 1, 2, ..., at most the key's depth, each document once, and scores strictly
    decreasing at float32 (run format 4). A manifest re-sealed over edited files, or an
    entry of an older format given the new key, is never used to write a run.

    Under the writer's seal (``entry.sealed``: the files are those :func:`write_split`
    wrote for this key) each block's lines are not read one by one: the index, the stats
    and each block's bounds (its first query id, its line count, its final line break) are."""
    key = entry.key
    try:
        test, depth, tag = set(key["split"][1]), int(key["depth"]), run_tag(str(key["tag"]))
        data = entry.read_bytes(RUN_FILE)
        index = json.loads(entry.read_bytes(INDEX_FILE).decode("utf-8"))
        stats = json.loads(entry.read_bytes(STATS_FILE)) if entry.file(STATS_FILE).is_file() else {}
    except (OSError, ValueError, KeyError, TypeError, IndexError, RecursionError, CacheChanged) as exc:
        return f"unreadable split run ({type(exc).__name__})"
    if not isinstance(stats, dict) or not all(
            isinstance(k, str) and type(v) in (int, float) and math.isfinite(v) and v >= 0 for k, v in stats.items()):
        return "stats.json is not a mapping name -> non-negative number"
    if not isinstance(index, list):
        return "index.json is not a list"
    offset, previous = 0, None
    for item in index:
        if (not isinstance(item, list) or len(item) != 3 or not isinstance(item[0], str)
                or not all(type(v) is int for v in item[1:])):
            return "index.json holds an item other than [query id, start, end]"
        qid, start, end = item
        if start != offset or end < start:
            return f"index.json: the block of query {qid!r} does not follow the previous one"
        if qid not in test:
            return f"query {qid!r} is not a test query of split {key['split'][0]!r}"
        if previous is not None and qid <= previous:
            return "index.json: query ids not sorted, or repeated"
        if entry.sealed:
            reason = _check_bounds(data, start, end, qid, depth)
        else:
            reason = _check_block(data[start:end], qid, tag, depth, strictly_decreasing_at_float32)
        if reason:
            return f"query {qid!r}: {reason}"
        offset, previous = end, qid
    if offset != len(data):
        return "run.trec holds bytes no query's block covers"
    return None


def _check_bounds(data: bytes, start: int, end: int, qid: str, depth: int) -> str | None:
    """What a sealed entry's block is still checked for: lines of this query, at most
    ``depth`` of them, the last one ended (a block is empty, or it starts with its query's
    id and ends with a line break)."""
    if start == end:
        return None
    if data[end - 1] != 0x0A:
        return "a line without its end"
    if not data.startswith(f"{qid} Q0 ".encode("utf-8"), start, end):
        return "line 1 is not this query's"
    lines = data.count(b"\n", start, end)
    if lines > depth:
        return f"{lines} documents, more than the depth {depth}"
    return None


def _check_block(block: bytes, qid: str, tag: str, depth: int, strict) -> str | None:
    try:
        lines = block.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        return "lines that are not UTF-8"
    if lines.pop() != "":
        return "a line without its end"
    if len(lines) > depth:
        return f"{len(lines)} documents, more than the depth {depth}"
    ranking, seen = [], set()
    for rank, line in enumerate(lines, start=1):
        cols = line.split(" ")
        if len(cols) != 6 or cols[0] != qid or cols[1] != "Q0" or cols[3] != str(rank) or cols[5] != tag:
            return f"line {rank} is not this run's line {rank} (query, rank and tag {tag!r})"
        try:
            score = float(cols[4])
        except ValueError:
            return f"line {rank}: score {cols[4]!r} is not a number"
        if cols[2] in seen or not cols[2]:
            return f"document {cols[2]!r} ranked twice"
        seen.add(cols[2])
        ranking.append((cols[2], score))
    if not strict(ranking):
        return "scores not strictly decreasing at 32-bit precision (a run of an older format)"
    return None


def scores_entry(task_name: str, run: SplitRun, test: list[str], qrels: Qrels, measures) -> CacheEntry:
    """The cache entry of one split's per-query scores (see the module's docstring; the key:
    :func:`statbench.storage.keys.split_scores_entry`)."""
    return split_scores_entry(task_name, run.sha256, test, qrels, measures, required=(SCORES_FILE,),
                              check=check_split_scores, keep=(SCORES_FILE,))


def check_split_scores(entry: CacheEntry) -> str | None:
    """Whether a scores entry holds a score for each judged test query of its key on each of
    its measures, every one a finite number >= 0 (``None``), or why not."""
    try:
        judged, labels = set(entry.key["judged"]), {label for label, _ in entry.key["measures"]}
        scores = json.loads(entry.read_bytes(SCORES_FILE).decode("utf-8"))
    except (OSError, ValueError, KeyError, TypeError, RecursionError, CacheChanged) as exc:
        return f"unreadable scores ({type(exc).__name__})"
    if not isinstance(scores, dict) or set(scores) != judged:
        return "scores.json does not hold the split's judged test queries"
    for qid, values in scores.items():
        if not isinstance(values, dict) or set(values) != labels or not all(
                type(v) in (int, float) and math.isfinite(v) and v >= 0 for v in values.values()):
            return f"scores.json: query {qid!r} has not one finite score >= 0 per measure"
    return None


def cacheable_measures(measures: list[Measure]) -> bool:
    """Scores of custom measures (a plugin's code, not versioned here) are never cached."""
    return not any(is_custom(parse_measure(m.ir_measure)) for m in measures)
