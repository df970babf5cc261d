"""The legislative graph encoder (gdsr-2023 section 3.2): a GNN (GATv2 by default; GAT,
GCN or GraphSAGE as in the paper's Table 4) over the legislative graph, node features from
the trained DSR article encoder, trained with the DSR's contrastive loss on the L-hop
sub-graph of each batch's articles, the query vectors those of the frozen DSR query encoder.

Layers as the authors build them: conv, ReLU, dropout, ..., conv (no activation after the
last). The optimiser is AdamW with a *constant* learning rate (the paper's), so this loop
is not :func:`training.fit_epochs` (which decays linearly); it shares its checkpoints
(:class:`training.Checkpoints`: one verified entry per epoch with optimiser and RNG
state, resume after an interruption, a finished training loaded rather than repeated)."""

from __future__ import annotations

import random
import time
from pathlib import Path

from statbench.models.dense.training import Checkpoints, restore_rng, rng_state
from statbench.models.gdsr.dsr_encoder import contrastive_loss

GNN_TYPES = ("gatv2", "gat", "gcn", "graphsage")


def build_gnn(kind: str, dim: int, layers: int, dropout: float, heads: int = 1):
    """The GNN: ``layers`` convolutions of width ``dim`` (attention layers average ``heads``)."""
    import torch_geometric.nn as geom
    from torch import nn

    def conv():
        if kind == "gatv2":
            return geom.GATv2Conv(dim, dim, heads=heads, concat=False)
        if kind == "gat":
            return geom.GATConv(dim, dim, heads=heads, concat=False)
        if kind == "gcn":
            return geom.GCNConv(dim, dim)
        return geom.SAGEConv(dim, dim)

    class GNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.convs = nn.ModuleList(conv() for _ in range(layers))
            self.dropout = nn.Dropout(dropout)

        def forward(self, x, edge_index):
            for i, layer in enumerate(self.convs):
                x = layer(x, edge_index)
                if i + 1 < len(self.convs):
                    x = self.dropout(x.relu())
            return x

    return GNN()


def fit_lge(*, gnn, features, edge_index, article_node: dict[str, int], pairs, query_vectors: dict, qrels,
            hard_negatives: dict | None, params: dict, checkpoints, ctx) -> dict:
    """Train ``gnn`` (see the module docstring); returns the last epoch's summary with
    ``checkpoint``, the fingerprint of the saved weights."""
    with checkpoints.session():
        summary = _fit(gnn, features, edge_index, article_node, pairs, query_vectors, qrels, hard_negatives, params,
                       checkpoints, ctx)
    gnn.eval()
    return summary


def _fit(gnn, features, edge_index, article_node, pairs, query_vectors, qrels, hard_negatives, params, checkpoints,
         ctx) -> dict:
    import torch
    from torch_geometric.utils import k_hop_subgraph

    def save_model(folder: Path) -> None:
        torch.save(gnn.state_dict(), folder / "lge.pt")

    epochs, batch_size = int(params["lge_epochs"]), int(params["lge_batch_size"])
    optimizer = torch.optim.AdamW(gnn.parameters(), lr=float(params["lge_lr"]), eps=1e-7,
                                  weight_decay=float(params["lge_weight_decay"]))
    start_epoch, step = 0, 0
    resumed = checkpoints.latest()
    if resumed is not None:
        start_epoch, path, info = resumed
        gnn.load_state_dict(torch.load(path / "lge.pt", weights_only=True))
        state = torch.load(path / "trainer_state.pt", weights_only=False)
        optimizer.load_state_dict(state["optimizer"])
        restore_rng(state.get("rng"))
        step = int(state["step"])
        if info.get("finished"):
            ctx.log.info("lge: loaded after epoch %d from %s (finished earlier, %d steps)", start_epoch, path, step)
            return {**info, "checkpoint": Checkpoints.fingerprint(path)}
        ctx.log.info("lge: resuming after epoch %d from %s (step %d)", start_epoch, path, step)

    n_nodes = features.shape[0]
    per_epoch = -(-len(pairs) // batch_size)
    advance = ctx.progress("training the graph encoder", per_epoch * (epochs - start_epoch))
    started = time.perf_counter()
    summary: dict = {}
    loss_value = float("nan")
    for epoch in range(start_epoch, epochs):
        gnn.train()
        order = list(range(len(pairs)))
        random.Random(int(params["seed"]) + epoch).shuffle(order)
        for begin in range(0, len(order), batch_size):
            batch = [pairs[i] for i in order[begin : begin + batch_size]]
            doc_ids = [p.doc_id for p in batch]
            for p in batch:
                doc_ids.extend((hard_negatives or {}).get(p.query_id, [])[:1])
            nodes = torch.tensor([article_node[d] for d in doc_ids], dtype=torch.long)
            subset, sub_edges, mapping, _ = k_hop_subgraph(nodes, len(gnn.convs), edge_index, relabel_nodes=True,
                                                           num_nodes=n_nodes)
            out = gnn(features[subset], sub_edges)
            q = torch.stack([query_vectors[p.query_id] for p in batch])
            loss = contrastive_loss(q, out[mapping], [p.query_id for p in batch], doc_ids, qrels,
                                    float(params["lge_temperature"]), params["similarity"] == "cos")
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            loss_value = float(loss.detach())
            step += 1
            advance()
        finished = epoch + 1 == epochs
        summary = {"epoch": epoch + 1, "step": step, "loss": loss_value, "finished": finished,
                   "seconds": round(time.perf_counter() - started, 3), "pairs": len(pairs)}
        checkpoints.log({**summary, "lr": float(params["lge_lr"])})
        ctx.log.info("lge: epoch %d done, step %d, loss %.4f", epoch + 1, step, loss_value)
        saved = checkpoints.save(epoch + 1, save_model, {"optimizer": optimizer.state_dict(), "step": step,
                                                         "rng": rng_state()}, summary)
        summary["checkpoint"] = Checkpoints.fingerprint(saved)
    return summary


def propagate(gnn, features, edge_index, n_articles: int):
    """The GNN over the whole graph (evaluation mode); the article nodes' outputs, float32 numpy."""
    import torch

    gnn.eval()
    with torch.inference_mode():
        out = gnn(features, edge_index)[:n_articles]
    return out.float().cpu().numpy()
