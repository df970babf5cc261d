"""The ``fusion`` retriever: configured statbench models, each run on the split being run
exactly as ``statbench run --model NAME`` runs it (trained on the split's training queries
when it learns, its split run cached under the very key an ordinary run uses, so a
component already run is reused and one run here is reused by ``statbench run``), then
fused by ranx (:mod:`.engine`).

``statbench run --task stard --model fusion --param runs=bm25,minilm --param method=rrf``
fuses fold by fold; nothing is ever fitted on the test queries (weights are given, or tuned
on a dev split by the grid's ``tune:``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import ClassVar

from statbench.api import Document, Param, Query, Ranking, Retriever, RunContext, StatbenchError, cached
from statbench.contract.params import applicable_params
from statbench.data.runfile import order_ranking
from statbench.models.fusion.components import parse_components
from statbench.models.fusion.engine import AUTO, DEFAULT_K, METHODS, NORMS, FusionSettings, fuse_rankings, parse_weights
from statbench.registry.checks import check_rankings
from statbench.registry.plugins import call_plugin, get_registry
from statbench.run.runcache import split_run_entry
from statbench.run.splitruns import SplitRun, write_split
from statbench.storage.keys import model_cache_dir, model_identity


class FusionRetriever(Retriever):
    name: ClassVar[str] = "fusion"
    family: ClassVar[str] = "fusion"
    description: ClassVar[str] = ("runs of configured models fused by ranx (RRF, CombSUM, CombMNZ, weighted "
                                  "sum...), split by split")
    version: ClassVar[str] = "1"
    default_params: ClassVar[dict[str, Param]] = {
        "runs": Param("", description="the models fused, comma-separated (two or more), each run on the same "
                                      "split as by `statbench run --model NAME`; a model's parameters in brackets: "
                                      "bm25[k1=0.9;b=0.4],minilm"),
        "method": Param("rrf", choices=tuple(METHODS), description="ranx's fusion method (rank-based: rrf, isr, "
                        "log_isr, logn_isr, bordafuse; score-based: comb*, wsum, wmnz; condorcet is refused: not "
                        "deterministic)"),
        "norm": Param(AUTO, choices=(AUTO, *NORMS), description="score normalisation before fusing (ranx's; "
                      "auto: min-max for score-based methods, none for rank-based ones; borda only before a "
                      "score-based method)"),
        "weights": Param("", description="wsum/wmnz: one weight per run, comma-separated, in the order of runs "
                         "(tune them on a dev split with the grid's tune:)"),
        "k": Param(DEFAULT_K, min=1, description="RRF's k (score of rank r: 1/(k+r))"),
    }

    def __init__(self, **params):
        super().__init__(**params)
        self.components = parse_components(self.params["runs"])
        self.settings = FusionSettings(method=self.params["method"], norm=self.params["norm"],
                                       weights=parse_weights(self.params["weights"]),
                                       k=self.params["k"]).checked(len(self.components))
        registry = get_registry()
        self.models = []
        for component in self.components:
            entry = registry.get("retrievers", component.name)
            model = call_plugin(entry, "starting", lambda e=entry, c=component: e.cls(**c.params))
            self.models.append((component, entry, model))
        _check_distinct_configurations(self.models)
        #: learns when one of its components does (each is trained on the split's training queries)
        self.trainable = any(model.trainable for _, _, model in self.models)
        self.description = f"{self.settings.describe()} of {', '.join(c.label for c in self.components)}"
        self._corpus: list[Document] = []
        self._train: tuple = ()
        self._indexed: set[str] = set()

    def config(self) -> dict:
        """The fusion's parameters and each component's whole identity (plugin, version,
        parameters, weights): a component that changes never reuses a fused run."""
        return {**super().config(), "components": [model_identity(entry, model) for _, entry, model in self.models]}

    def train(self, queries, qrels, corpus, ctx: RunContext) -> None:
        self._train = (list(queries), dict(qrels))  # each learning component trains on them, in search

    def index(self, corpus: Sequence[Document], ctx: RunContext) -> None:
        # what a run does to a model (the task's language known): a component's parameter that
        # does not apply (segmenter on an English task) is dropped, or refused when given
        for component, entry, model in self.models:
            model.params = applicable_params(model.params, entry.cls.param_specs(), ctx.language, entry.name,
                                             given=component.params, task=ctx.task_name)
        self._corpus = list(corpus)  # each component indexes on its first cache miss only

    def search(self, queries: Sequence[Query], k: int, ctx: RunContext) -> dict[str, Ranking]:
        split = ctx.split
        if split is None:
            raise StatbenchError("fusion: the run did not say which split it runs (RunContext.split); the fusion "
                                 "retriever runs inside `statbench run` or a grid")
        runs = [self._component_run(component, entry, model, split, queries, k, ctx)
                for component, entry, model in self.models]
        return fuse_rankings(runs, [q.id for q in queries], self.settings, k,
                             labels=[c.label for c in self.components])

    def _component_run(self, component, entry, model, split, queries, k: int, ctx: RunContext) -> dict[str, Ranking]:
        """The component's rankings of the split's test queries: its cached split run (the
        entry ``statbench run --model NAME`` reads and writes), or computed and cached."""
        tag = f"statbench-{component.name}"  # the tag an ordinary run of this model writes (output_tag)
        cache_entry = split_run_entry(ctx.task_name, ctx.data_checksum, split, retriever=model,
                                      retriever_entry=entry, depth=k, tag=tag)
        built: list[dict[str, Ranking]] = []

        def build(staging) -> None:
            rankings = self._compute(component, entry, model, split, queries, k, ctx)
            write_split(staging, rankings, tag)
            built.append(rankings)

        cached(cache_entry, build)
        if built:
            return built[0]
        ctx.log.info("fusion: %s on %s: reusing cached run %s", component.label, split.name, cache_entry.path)
        return SplitRun.read(split.name, cache_entry).rankings()

    def _compute(self, component, entry, model, split, queries, k: int, ctx: RunContext) -> dict[str, Ranking]:
        """What the runner does for a first stage (train, index, search, check, order)."""
        own = RunContext(task_name=ctx.task_name, language=ctx.language,
                         cache_dir=model_cache_dir(entry, model, ctx.data_checksum, split if model.trainable else None),
                         cache_root=ctx.cache_root, data_checksum=ctx.data_checksum, log=ctx.log,
                         stopwords=ctx.stopwords, progress=ctx.progress, split=split)
        if model.trainable:
            if not self._train:
                raise StatbenchError(f"fusion: component {component.label} learns but no training queries were given")
            train_queries, train_qrels = self._train
            call_plugin(entry, f"training on {split.name}",
                        lambda: model.train(train_queries, train_qrels, self._corpus, own))
        if model.trainable or component.label not in self._indexed:
            call_plugin(entry, "indexing", lambda: model.index(self._corpus, own))
            self._indexed.add(component.label)
        found = call_plugin(entry, f"searching {split.name}", lambda: model.search(list(queries), k, own))
        owner = f"model {entry.name!r} ({entry.qualified}) in fusion"
        checked = check_rankings(found, owner=owner, query_ids={q.id for q in queries},
                                 corpus={d.id for d in self._corpus}, k=k)
        ctx.log.info("fusion: %s on %s: %d test queries ranked", component.label, split.name, len(checked))
        return {qid: order_ranking(ranking, k) for qid, ranking in checked.items()}


def _check_distinct_configurations(models) -> None:
    """Two components of one identity (the key their split runs are cached under: plugin,
    version, every parameter with its default, weights) are one run, however spelled
    (``bm25,bm25[k1=1.2]`` with 1.2 bm25's default): one line naming both."""
    seen: dict[str, str] = {}
    for component, entry, model in models:
        identity = json.dumps(model_identity(entry, model), sort_keys=True, default=str)
        if identity in seen:
            raise StatbenchError(f"fusion: runs {seen[identity]!r} and {component.label!r} are one configuration "
                                 "(the same model with the same parameters, defaults included): fusing a run with "
                                 "itself only reweights it")
        seen[identity] = component.label
