"""What a board is about: its task's title, measures and published figures (from the registered
task when installed, else from the results), its data and protocol in words."""

from __future__ import annotations

from statbench.leaderboard.collect.rows import FIRST_VERSION, Row
from statbench.registry.plugins import get_registry


def board_data(rows: list[Row]) -> dict:
    """The data a board's rows were scored on: corpus size (as recorded; None for results
    written before it was), queries over its splits, data checksum."""
    sizes = [r.corpus_size for r in rows if r.corpus_size is not None]
    return {"corpus_size": sizes[0] if sizes else None, "queries": sum(n for _, n in rows[0].split_set),
            "checksum": rows[0].results.task.data_checksum}

def data_words(data: dict, unit: str) -> str:
    size = data["corpus_size"]
    corpus = f"{size:,} {unit}" if size is not None else "corpus size not recorded"
    return f"{corpus}, {data['queries']:,} queries"

def task_info(name: str, rows: list[Row]) -> dict:
    """Title, measures and published figures: from the registered task when installed,
    otherwise from the results themselves (then without published figures).

    The measures are the board's own (every row of a board defines each label alike);
    published figures are split into those measured on the board's data with the same
    measure definitions, when the board is of the installed task's version (``published``:
    ranked with the runs) and the others
    (``published_apart``: a block of their own, titled with both data, never ranked,
    tested or drawn)."""

    entry = get_registry().tasks.get(name)
    cls = entry.cls if entry else None
    board_measures = {m.label: m.ir_measure for m in rows[0].results.measures}
    task_measures = {m.label: m.ir_measure for m in cls.measures} if cls is not None and cls.measures else {}
    measures = [{"label": label, "ir_measure": board_measures[label]} for label in task_measures
                if label in board_measures]
    measures += [{"label": label, "ir_measure": spelling} for label, spelling in board_measures.items()
                 if label not in task_measures]
    redefined = sorted(label for label, spelling in board_measures.items()
                       if label in task_measures and task_measures[label] != spelling)
    info = cls.task_info() if cls is not None else None
    unit = getattr(info, "corpus_unit", "") or "documents"
    data = board_data(rows)
    # the protocol whose splits the board holds (results written before protocols existed
    # recorded a description here, so the split names decide)
    split_names = [s.name for s in rows[0].results.splits]
    protocol = (info.protocol_of(split_names) if info is not None else "") or rows[0].results.task.protocol or ""
    described = info.protocol(protocol) if info is not None and protocol else None
    if described is not None and set(described.splits) != set(split_names):
        described = None
    version = rows[0].results.task.version or FIRST_VERSION
    published, apart = _published(info, described, data, version, redefined, unit)
    return {
        "cls": cls,
        "info": info,
        "title": (info.description if info is not None else "") or name,
        "language": rows[0].results.task.language,
        "protocol": f"{protocol}: {described.description}" if described else protocol,
        "paper": info.paper if info is not None else "",
        "measures": measures,
        "published": published,
        "published_apart": apart,
        "data": data,
        "unit": unit,
        "protocol_name": described.name if described else "",
    }


def _published(info, described, data: dict, version: str, redefined: list[str], unit: str) -> tuple[dict, dict]:
    """The task's published figures of this board's protocol: those measured on the board's
    data with the board's measure definitions, at the installed task's version (ranked with
    the runs), and the others by the title that says why they stand apart."""
    published, apart = {}, {}
    if info is not None and described is not None:
        # a published figure belongs to the board of its protocol (the default one when it
        # names none); a board of a hand-picked set of splits shows none
        default = info.protocol()
        for p in info.published:
            if (p.protocol or (default.name if default else "")) != described.name:
                continue
            figure = {"source": p.source, "family": p.family, "scores": dict(p.scores),
                      **({"pool": p.pool} if p.pool else {})}
            same = p.same_data(corpus_size=data["corpus_size"], queries=data["queries"], checksum=data["checksum"])
            if same and version == info.version and not any(label in redefined for label in p.scores):
                published[p.label] = figure
                continue
            if version != info.version:
                # the figures are the installed task's declaration: its version's board only
                title = f"Declared by version {info.version} of the task; this board: version {version}"
            elif not same:
                reported = p.data.words(unit) if p.data is not None else "data not declared by the task"
                title = f"Reported on {reported}; this board: {data_words(data, unit)}"
            else:
                title = (f"Reported with the task's measure definitions; this board defines "
                         f"{', '.join(redefined)} otherwise")
            apart.setdefault(title, {})[p.label] = figure
    return published, apart


def board_words(task: str, info: dict) -> str:
    """A board in words, from what identifies it: ``stard · 58,279 articles, 1,543 queries
    · protocol 5-fold`` (checksums are in its details)."""
    parts = [task, data_words(info["data"], info["unit"])]
    if info["protocol_name"]:
        parts.append(f"protocol {info['protocol_name']}")
    return " · ".join(parts)
