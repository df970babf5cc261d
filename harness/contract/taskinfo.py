"""What a task declares about itself, typed: the one record the core reads about a task.

A task class carries a :class:`TaskInfo` as ``info`` (``DefinedTask`` fills it from its
JSON definition; a plain :class:`~statbench.api.Task` declares it in Python). Everything
the harness needs before loading any data lives here: language and analyzer, the
relevance scale, named protocols (sets of splits evaluated together, one the default),
the primary measure and every measure, the run depth, the frozen pools a task expects,
and published figures with their source. :func:`check_info` validates one in one place.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from statbench.contract.records import Measure


@dataclass(frozen=True)
class Protocol:
    """A way of evaluating the task: its splits are run together and reported as one
    table (mean ± std over splits when there are several)."""

    name: str
    splits: tuple[str, ...]
    description: str = ""


@dataclass(frozen=True)
class PoolInfo:
    """A frozen candidate pool the task expects (built with ``statbench pool build``)."""

    name: str
    description: str = ""
    depth: int = 100
    retriever: str = ""
    build: str = ""


@dataclass(frozen=True)
class PublishedData:
    """The data a published figure was measured on: corpus and query-set sizes, and a
    checksum (the ``data_checksum`` statbench records) or a version name where known."""

    corpus_size: int | None = None
    queries: int | None = None
    checksum: str = ""
    version: str = ""
    #: in words, for the block a board shows such figures in (e.g. "the paper's corpus")
    description: str = ""

    def same_as(self, *, corpus_size: int | None, queries: int | None = None, checksum: str = "") -> bool:
        """Whether figures measured on this data can be ranked beside a run on the data
        described by the arguments: every field known on both sides agrees (checksum,
        corpus size, query count: a figure's own ``queries`` over the task's checksum is
        another query set), and the checksums or else the corpus sizes are known on both
        sides. Unknown is not equal."""
        for mine, theirs in ((self.checksum, checksum), (self.corpus_size, corpus_size), (self.queries, queries)):
            if mine not in (None, "") and theirs not in (None, "") and mine != theirs:
                return False
        if self.checksum and checksum:
            return True
        return self.corpus_size is not None and corpus_size is not None

    @classmethod
    def from_json(cls, spec: dict) -> PublishedData:
        """From its JSON form (``published_data`` of a task definition, or a figure's ``data``)."""
        return cls(corpus_size=spec.get("corpus_size"), queries=spec.get("queries"), checksum=spec.get("checksum", ""),
                   version=spec.get("version", ""), description=spec.get("description", ""))

    def words(self, unit: str = "documents") -> str:
        """The data in words, as a board's block of such figures is titled: ``the paper's
        corpus: 124,796 passages, 100 queries``."""
        sizes = ", ".join(part for part in (
            f"{self.corpus_size:,} {unit}" if self.corpus_size is not None else "",
            f"{self.queries:,} queries" if self.queries is not None else "") if part)
        name = self.description or "other data"
        text = f"{name}: {sizes}" if sizes else name
        if self.version:
            text += f" ({self.version})"
        return text


@dataclass(frozen=True)
class Published:
    """Reference figures from a paper: measure label -> value (fractions, not percents)."""

    label: str
    source: str
    scores: Mapping[str, float]
    family: str = ""
    protocol: str = ""
    #: the frozen pool reranked, for figures of rerankers
    pool: str = ""
    #: the data the figures were measured on (None: not declared, so never ranked beside runs)
    data: PublishedData | None = None

    def same_data(self, *, corpus_size: int | None, queries: int | None = None, checksum: str = "") -> bool:
        """Whether these figures were measured on the data described (see :meth:`PublishedData.same_as`)."""
        return self.data is not None and self.data.same_as(corpus_size=corpus_size, queries=queries,
                                                           checksum=checksum)


@dataclass(frozen=True)
class TaskInfo:
    name: str
    language: str
    measures: tuple[Measure, ...]
    #: label of the measure significance tests and summaries use
    primary_measure: str = ""
    description: str = ""
    #: bump whenever the loader builds anything differently from the same files
    version: str = "1"
    #: the analyzer the task's text calls for, when not the language's default
    analyzer: str = ""
    #: relevance grade -> what it means
    relevance: Mapping[int, str] = field(default_factory=lambda: {1: "relevant"})
    protocols: tuple[Protocol, ...] = ()
    default_protocol: str = ""
    depth: int = 1000
    pools: tuple[PoolInfo, ...] = ()
    published: tuple[Published, ...] = ()
    #: declared sizes (split name -> queries, and "corpus"), shown before any data is loaded
    sizes: Mapping[str, int] = field(default_factory=dict)
    paper: str = ""
    licence: str = ""
    #: how the task is evaluated, in words
    evaluation: str = ""
    #: what the corpus's documents are called, plural ("articles", "passages"): board names
    corpus_unit: str = "documents"

    @property
    def primary(self) -> str:
        """The primary measure's label (the first measure when none is declared)."""
        return self.primary_measure or self.measures[0].label

    def protocol(self, name: str | None = None) -> Protocol | None:
        """The named protocol, or the default one (None when the task declares none)."""
        wanted = name or self.default_protocol or (self.protocols[0].name if self.protocols else "")
        return next((p for p in self.protocols if p.name == wanted), None)

    def protocol_of(self, split_names) -> str:
        """The protocol whose splits are exactly ``split_names`` ('' when none is)."""
        wanted = set(split_names)
        return next((p.name for p in self.protocols if set(p.splits) == wanted), "")

    @property
    def measure_labels(self) -> list[str]:
        return [m.label for m in self.measures]


_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


def check_info(info: TaskInfo) -> list[str]:
    """Every problem with a declaration (empty when it is sound); measures are checked
    for parsing elsewhere (they may need the measure registry)."""
    problems = []
    if not isinstance(info.name, str) or not _NAME.match(info.name):
        problems.append(f"name {info.name!r} must be letters, digits, '.', '_', '+', '-'")
    if not isinstance(info.language, str) or not re.fullmatch(r"[a-z]{2,3}(-[A-Za-z0-9]+)*", info.language):
        problems.append(f"language {info.language!r} must be an ISO 639 code such as 'fr' or 'zh'")
    if not info.measures:
        problems.append("declares no measures")
    labels = [m.label for m in info.measures]
    if info.primary_measure and info.primary_measure not in labels:
        problems.append(f"primary measure {info.primary_measure!r} is not one of its measures ({', '.join(labels)})")
    if not isinstance(info.depth, int) or isinstance(info.depth, bool) or info.depth < 1:
        problems.append(f"depth must be an int >= 1, found {info.depth!r}")
    names = [p.name for p in info.protocols]
    if len(set(names)) != len(names):
        problems.append("a protocol is declared twice")
    for protocol in info.protocols:
        if not protocol.splits:
            problems.append(f"protocol {protocol.name!r} names no split")
    if info.default_protocol and info.default_protocol not in names:
        problems.append(f"default protocol {info.default_protocol!r} is not one of its protocols ({', '.join(names)})")
    for grade in info.relevance:
        if not isinstance(grade, int) or isinstance(grade, bool):
            problems.append(f"relevance grade {grade!r} must be an int")
    pool_names = [p.name for p in info.pools]
    if len(set(pool_names)) != len(pool_names):
        problems.append("a pool is declared twice")
    published_labels = []
    for published in info.published:
        if not isinstance(published, Published):
            problems.append(f"published figures must be statbench.contract.taskinfo.Published, found {type(published).__name__}")
            continue
        figure_problems = _figure_problems(published, names)
        if figure_problems:
            problems.extend(figure_problems)
            continue
        published_labels.append(published.label)
        unknown = sorted(set(published.scores) - set(labels))
        if unknown:
            problems.append(f"published figures {published.label!r} name measures the task does not declare: "
                            f"{', '.join(unknown)}")
        problems.extend(f"published figures {published.label!r}: {problem}" for problem in _data_problems(published.data))
    twice = sorted({label for label in published_labels if published_labels.count(label) > 1})
    if twice:
        problems.append(f"published figures {', '.join(map(repr, twice))} declared twice (one would hide the other)")
    return problems


def _figure_problems(published: Published, protocols: list[str]) -> list[str]:
    """What makes one published figure unusable: its label, source and scores typed, every
    score a finite number, its protocol one the task declares (a figure of an unknown
    protocol would belong to no board and be shown nowhere)."""
    import math

    if not isinstance(published.label, str) or not published.label.strip():
        return [f"published figures need a label (a non-empty string), found {published.label!r}"]
    where = f"published figures {published.label!r}"
    problems = []
    for name in ("source", "family", "protocol", "pool"):
        if not isinstance(getattr(published, name), str):
            problems.append(f"{where}: {name} must be a string, found {getattr(published, name)!r}")
    if not isinstance(published.scores, Mapping):
        return problems + [f"{where}: scores must be a mapping of measure label -> value, "
                           f"found {published.scores!r}"]
    for label, value in published.scores.items():
        if not isinstance(label, str):
            problems.append(f"{where}: measure label {label!r} must be a string")
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            problems.append(f"{where}: {label}: {value!r} is not a finite number")
    if isinstance(published.protocol, str) and published.protocol and published.protocol not in protocols:
        declared = ", ".join(protocols) or "none"
        problems.append(f"{where}: protocol {published.protocol!r} is not one of the task's protocols ({declared}): "
                        "the figures would be shown on no board")
    return problems


def _data_problems(data: PublishedData | None) -> list[str]:
    """What is wrong with the data a published figure declares (None: not declared, which
    is sound: such figures are never ranked beside runs)."""
    if data is None:
        return []
    if not isinstance(data, PublishedData):
        return [f"data must be a PublishedData, found {type(data).__name__}"]
    problems = []
    for name in ("corpus_size", "queries"):
        value = getattr(data, name)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            problems.append(f"data {name} must be an int >= 1, found {value!r}")
    if data.checksum and not re.fullmatch(r"[0-9a-f]{64}", str(data.checksum)):
        problems.append(f"data checksum {data.checksum!r} must be a sha256 in hex (the data_checksum statbench records)")
    for name in ("version", "description"):
        if not isinstance(getattr(data, name), str):
            problems.append(f"data {name} must be a string, found {getattr(data, name)!r}")
    if data.corpus_size is None and not data.checksum:
        problems.append("data declares neither a corpus size nor a checksum: it could never be matched")
    return problems
