"""A corpus analysed once per (corpus, analyzer), in several processes, and cached.

The analysis itself (per language: NFKC, segmentation, stop words, stemming) is
:class:`statbench.api.Analyzer` (statbench.data.analysis), public so that a plugin's
tokens equal the built-in models' (docs/models-lexical.md). Here a large corpus is
analysed by this process and worker processes together (analysis_worker.py); the result
is a :class:`TokenizedCorpus` (term ids), exactly what one process gives, i.e. exactly
``analyzer(text)`` for each text. Tokenised corpora are cached on disk (a verified cache
entry, see artefacts.py), keyed by corpus checksum and analyzer config, so BM25, QL and
TF-IDF on the same task tokenise the corpus once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from statbench.api import SEGMENTER_PARAM as SEGMENTER
from statbench.api import Analyzer, CacheEntry, StatbenchError, can_fork, configured_workers, ids_digest, usable_cpus
from statbench.models.lexical.tokenized import TokenizedCorpus
from statbench.models.shared.artefacts import load_or_build

__all__ = ["SEGMENTER_PARAM", "analyse_texts", "tokenize_corpus", "analysis_workers"]

TOKENS_FILE = "tokens.pkl"
#: The tokens entry's layout (a TokenizedCorpus; entries of token lists were another layout).
TOKENS_LAYOUT = "ids"
#: The parameter every model built on these analyzers takes (Chinese tasks only: on another
#: language it is neither recorded nor accepted).
SEGMENTER_PARAM = {"segmenter": SEGMENTER}


def analysis_workers(n_texts: int) -> int:
    """Processes for analysing a corpus: ``STATBENCH_WORKERS``, else every CPU this process
    may use, but one for corpora under 20,000 texts (where a worker that cannot be forked,
    ~0.7 s of CPU to start, would gain little)."""
    workers = configured_workers()
    if workers is None:
        workers = 1 if n_texts < 20_000 else usable_cpus()
    return max(1, min(workers, n_texts))


def analyse_texts(analyzer: Analyzer, texts: Sequence[str], advance=lambda n=1: None,
                  compact: bool = False) -> list[list[str]] | TokenizedCorpus:
    """Analyse texts in order: each text's terms, or with ``compact`` the whole as a
    :class:`TokenizedCorpus`. Many texts are shared between this process and worker
    processes (segmentation holds the GIL, so threads would not help); every process
    takes blocks of texts until none is left, and the result is exactly one process's.

    Workers are forked, or fresh interpreters when forking is unsafe (see analysis_worker),
    and send back arrays, not token lists."""
    # inside: analysis_worker imports numpy, and `statbench --help` imports this module (every plugin's)
    from statbench.models.lexical.analysis_worker import analyse_blocks, block_size

    processes = analysis_workers(len(texts))
    block = block_size(len(texts), processes)
    if processes == 1 or len(texts) <= block:
        corpus = _merge(len(texts), block, [analyse_blocks(analyzer, lambda a, b: texts[a:b], len(texts), block,
                                                           None, advance)])
    else:
        corpus = _analyse_in_processes(analyzer, texts, block, processes, advance)
    return corpus if compact else corpus.lists()


def _analyse_in_processes(analyzer: Analyzer, texts: Sequence[str], block: int, processes: int,
                          advance) -> TokenizedCorpus:
    import gc
    import tempfile

    # inside: see analyse_texts
    from statbench.models.lexical.analysis_worker import (
        CLAIMS,
        Forked,
        Part,
        Spawned,
        analyse_blocks,
        write_input,
    )

    def block_texts(number: int) -> int:
        return min(len(texts), (number + 1) * block) - number * block

    with tempfile.TemporaryDirectory(prefix="statbench-analysis-") as name:
        folder = Path(name)
        (folder / CLAIMS).mkdir()
        workers = []
        try:
            try:
                if can_fork():
                    analyzer.load()  # the segmenter, stemmer and NFKC table, inherited by the workers
                    gc.freeze()  # (a child's collections then leave the inherited objects' pages shared)
                    try:
                        for number in range(processes - 1):
                            workers.append(Forked(analyzer, texts, block, folder, number))
                    finally:
                        gc.unfreeze()
                else:
                    for number in range(processes - 1):
                        workers.append(Spawned(folder, number))
                    write_input(folder, analyzer, texts, block)
                    for worker in workers:
                        worker.go()
            except OSError as exc:
                raise StatbenchError(f"could not start an analysis worker ({exc}); STATBENCH_WORKERS=1 analyses in "
                                     "this process") from None
            parts = [analyse_blocks(analyzer, lambda a, b: texts[a:b], len(texts), block, folder, advance)]
            for number, worker in enumerate(workers):
                code = worker.wait()
                if code != 0:
                    err = worker.err.read_bytes().decode(errors="replace") if worker.err.exists() else ""
                    raise StatbenchError(f"an analysis worker failed (exit {code}; STATBENCH_WORKERS=1 "
                                         f"analyses in this process):\n{err[-2000:]}")
                path = folder / f"part-{number}.pkl"
                if path.exists():  # (a worker that exits without writing never claimed a block; a lost one is refused)
                    parts.append(Part.load(path, block_texts))
                    advance(sum(block_texts(n) for n, _ in parts[-1].claims))
            return _merge(len(texts), block, parts)
        finally:
            for worker in workers:
                worker.kill()


def _merge(n_texts: int, block: int, parts: list) -> TokenizedCorpus:
    """One corpus from the processes' parts: blocks in corpus order, each process's new
    terms numbered in the order they first occur in the corpus (the order of analysing
    everything in one process)."""
    import numpy as np

    owner = {number: (p, j, size) for p, part in enumerate(parts) for j, (number, size) in enumerate(part.claims)}
    n_blocks = -(-n_texts // block)
    if len(owner) != n_blocks or any(number not in owner for number in range(n_blocks)):
        raise StatbenchError(f"text analysis lost {n_blocks - len(owner)} of {n_blocks} blocks (STATBENCH_WORKERS=1 "
                             "analyses in this process)")
    if sum(1 for part in parts if part.claims) <= 1:
        (part,) = [part for part in parts if part.claims] or parts[:1]
        terms = part.terms
        offsets = _offsets(n_texts, part.lengths)
        flat = np.concatenate(part.ids).astype(np.int32, copy=False) if part.ids else np.zeros(0, dtype=np.int32)
        return TokenizedCorpus(terms, flat, offsets)
    terms, index, order = [], {}, []
    remaps = [np.zeros(len(part.terms), dtype=np.int32) for part in parts]
    seen = [0] * len(parts)
    for number in range(n_blocks):  # the vocabularies first: only each block's new terms
        p, j, size = owner[number]
        local, remap = parts[p].terms, remaps[p]
        for i in range(seen[p], size):
            term = local[i]
            g = index.get(term)
            if g is None:
                g = index[term] = len(terms)
                terms.append(term)
            remap[i] = g
        seen[p] = size
        order.append((p, j, size))
    offsets = _offsets(n_texts, [parts[p].lengths[j] for p, j, _ in order])
    # then every block's ids, translated straight into the corpus array (no per-block copies);
    # a remap entry never changes once set, so translating after the loop gives the same ids
    flat = np.empty(int(offsets[-1]), dtype=np.int32)
    at = 0
    for p, j, size in order:
        block_ids = parts[p].ids[j]
        if block_ids.size and (block_ids.min() < 0 or block_ids.max() >= size):
            raise StatbenchError("text analysis: a worker returned a term id outside its vocabulary "
                                 "(STATBENCH_WORKERS=1 analyses in this process)")
        np.take(remaps[p], block_ids, out=flat[at:at + block_ids.size])
        at += block_ids.size
    if at != flat.size:  # (np.empty: never hand on unwritten ids)
        raise StatbenchError("text analysis: the workers' term ids and terms-per-text counts disagree "
                             "(STATBENCH_WORKERS=1 analyses in this process)")
    return TokenizedCorpus(terms, flat, offsets)


def _offsets(n_texts: int, lengths: list):
    """Text start offsets (n_texts + 1) from the blocks' terms-per-text arrays, in order."""
    import numpy as np

    offsets = np.zeros(n_texts + 1, dtype=np.int64)
    if lengths:
        np.cumsum(np.concatenate(lengths), out=offsets[1:])
    return offsets


def tokenize_corpus(analyzer: Analyzer, doc_ids: Sequence[str], texts: Sequence[str], cache_root: Path,
                    data_checksum: str, progress=None) -> TokenizedCorpus:
    """Tokenise every document once per (corpus, analyzer); later calls read the cache.

    The entry ``tokens/DATA-IDS-ANALYZER-ids/tokens.pkl`` (kind ``tokens``) holds the
    compact corpus and is keyed by the data checksum, the document ids in order and the
    analyzer's configuration."""
    ids = ids_digest(doc_ids)
    key = {"data": data_checksum, "ids": ids, "analyzer": analyzer.key(), "layout": TOKENS_LAYOUT}
    entry = CacheEntry(cache_root / "tokens" / f"{data_checksum[:16]}-{ids[:12]}-{analyzer.key()}-{TOKENS_LAYOUT}",
                       "tokens", key)

    def build(staging: Path) -> TokenizedCorpus:
        advance = progress("tokenising corpus", len(texts)) if progress else (lambda n=1: None)
        tokens = analyse_texts(analyzer, texts, advance, compact=True)
        tokens.save(staging / TOKENS_FILE)
        return tokens

    tokens, _ = load_or_build(entry, build, lambda folder: TokenizedCorpus.load(folder / TOKENS_FILE))
    return tokens
