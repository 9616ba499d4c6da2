"""graphflow's molecule GIN against OGB's (snap-stanford/ogb, ``examples/graphproppred/mol``:
``GINConv``, ``GNN_node`` and ``GNN_node_Virtualnode`` of ``conv.py``, ``GNN`` of ``gnn.py``),
copied here as it is written there with PyG's three pieces written out on plain torch
(``propagate``: the messages summed into their targets with ``index_add_``;
``global_add_pool`` / ``global_mean_pool``: ``index_add_`` over the node -> graph index) and
OGB's own ``AtomEncoder`` / ``BondEncoder``. OGB's weights are copied into graphflow's model
built from the ``[model]`` and ``[train]`` tables of ``examples/bbbp_gin.toml`` and
``examples/tox21_gin_virtual.toml`` (at a smaller width), on molecules featurised by
graphflow's SMILES reader: the same scores in eval mode, the same scores and gradients in
training mode with the dropout off, and with it on, the dropout on the same tensors in the
same order (both sides' dropout replaced by one that draws the k-th call's mask from seed k).
"""

import os
import tomllib
from functools import lru_cache
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn

os.environ.setdefault("OUTDATED_IGNORE", "1")  # ogb's import would ask PyPI for its version
pytest.importorskip("rdkit")
mol_encoder = pytest.importorskip("ogb.graphproppred.mol_encoder")
AtomEncoder, BondEncoder = mol_encoder.AtomEncoder, mol_encoder.BondEncoder

import graphflow.nn.stack as stack_module  # noqa: E402
from graphflow.chem.featurize import featurize  # noqa: E402
from graphflow.compat.dgl import dgl  # noqa: E402
from graphflow.graphs.batch import GraphBatcher  # noqa: E402
from graphflow.graphs.model import GraphModel  # noqa: E402
from graphflow.manager import create_host  # noqa: E402
from graphflow.options import parse_options  # noqa: E402
from graphflow.sparse import Adjacency  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
WIDTH, TASKS = 16, 3  # emb_dim (the examples': 300), num_tasks
SMILES = ["CC(=O)Oc1ccccc1C(=O)O", "C[C@H](N)C(=O)O", "O=C([O-])CC[NH3+]", "c1ccncc1",
          "CN1C=NC2=C1C(=O)N(C(=O)N2C)C", "[Na+].[Cl-]", "C1CC1Br", "CCO"]


# ---------------------------------------------------------------- PyG's pieces, on plain torch
class MessagePassing(nn.Module):
    """PyG's ``MessagePassing(aggr="add")``, source -> target: ``update(sum over the edges
    into i of message(x_j, edge_attr))``."""

    def __init__(self, aggr="add"):
        super().__init__()
        assert aggr == "add"

    def propagate(self, edge_index, x, edge_attr):
        src, dst = edge_index
        msg = self.message(x[src], edge_attr)
        return self.update(x.new_zeros(x.shape[0], msg.shape[1]).index_add_(0, dst, msg))


def global_add_pool(x, batch):
    return x.new_zeros(int(batch.max()) + 1, x.shape[1]).index_add_(0, batch, x)


def global_mean_pool(x, batch):
    count = torch.bincount(batch).to(x.dtype)
    return global_add_pool(x, batch) / count[:, None]


# ---------------------------------------------------------------- OGB's conv.py, as written
### GIN convolution along the graph structure
class GINConv(MessagePassing):
    def __init__(self, emb_dim):
        '''
            emb_dim (int): node embedding dimensionality
        '''

        super(GINConv, self).__init__(aggr = "add")

        self.mlp = torch.nn.Sequential(torch.nn.Linear(emb_dim, 2*emb_dim), torch.nn.BatchNorm1d(2*emb_dim), torch.nn.ReLU(), torch.nn.Linear(2*emb_dim, emb_dim))
        self.eps = torch.nn.Parameter(torch.Tensor([0]))

        self.bond_encoder = BondEncoder(emb_dim = emb_dim)

    def forward(self, x, edge_index, edge_attr):
        edge_embedding = self.bond_encoder(edge_attr)
        out = self.mlp((1 + self.eps) *x + self.propagate(edge_index, x=x, edge_attr=edge_embedding))

        return out

    def message(self, x_j, edge_attr):
        return F.relu(x_j + edge_attr)

    def update(self, aggr_out):
        return aggr_out


### GNN to generate node embedding
class GNN_node(torch.nn.Module):
    """
    Output:
        node representations
    """
    def __init__(self, num_layer, emb_dim, drop_ratio = 0.5, JK = "last", residual = False, gnn_type = 'gin'):
        '''
            emb_dim (int): node embedding dimensionality
            num_layer (int): number of GNN message passing layers

        '''

        super(GNN_node, self).__init__()
        self.num_layer = num_layer
        self.drop_ratio = drop_ratio
        self.JK = JK
        ### add residual connection or not
        self.residual = residual

        if self.num_layer < 2:
            raise ValueError("Number of GNN layers must be greater than 1.")

        self.atom_encoder = AtomEncoder(emb_dim)

        ###List of GNNs
        self.convs = torch.nn.ModuleList()
        self.batch_norms = torch.nn.ModuleList()

        for layer in range(num_layer):
            if gnn_type == 'gin':
                self.convs.append(GINConv(emb_dim))
            else:
                raise ValueError('Undefined GNN type called {}'.format(gnn_type))

            self.batch_norms.append(torch.nn.BatchNorm1d(emb_dim))

    def forward(self, batched_data):
        x, edge_index, edge_attr, batch = batched_data.x, batched_data.edge_index, batched_data.edge_attr, batched_data.batch

        ### computing input node embedding

        h_list = [self.atom_encoder(x)]
        for layer in range(self.num_layer):

            h = self.convs[layer](h_list[layer], edge_index, edge_attr)
            h = self.batch_norms[layer](h)

            if layer == self.num_layer - 1:
                #remove relu for the last layer
                h = F.dropout(h, self.drop_ratio, training = self.training)
            else:
                h = F.dropout(F.relu(h), self.drop_ratio, training = self.training)

            if self.residual:
                h += h_list[layer]

            h_list.append(h)

        ### Different implementations of Jk-concat
        if self.JK == "last":
            node_representation = h_list[-1]
        elif self.JK == "sum":
            node_representation = 0
            for layer in range(self.num_layer + 1):
                node_representation += h_list[layer]

        return node_representation


### Virtual GNN to generate node embedding
class GNN_node_Virtualnode(torch.nn.Module):
    """
    Output:
        node representations
    """
    def __init__(self, num_layer, emb_dim, drop_ratio = 0.5, JK = "last", residual = False, gnn_type = 'gin'):
        '''
            emb_dim (int): node embedding dimensionality
        '''

        super(GNN_node_Virtualnode, self).__init__()
        self.num_layer = num_layer
        self.drop_ratio = drop_ratio
        self.JK = JK
        ### add residual connection or not
        self.residual = residual

        if self.num_layer < 2:
            raise ValueError("Number of GNN layers must be greater than 1.")

        self.atom_encoder = AtomEncoder(emb_dim)

        ### set the initial virtual node embedding to 0.
        self.virtualnode_embedding = torch.nn.Embedding(1, emb_dim)
        torch.nn.init.constant_(self.virtualnode_embedding.weight.data, 0)

        ### List of GNNs
        self.convs = torch.nn.ModuleList()
        ### batch norms applied to node embeddings
        self.batch_norms = torch.nn.ModuleList()

        ### List of MLPs to transform virtual node at every layer
        self.mlp_virtualnode_list = torch.nn.ModuleList()

        for layer in range(num_layer):
            if gnn_type == 'gin':
                self.convs.append(GINConv(emb_dim))
            else:
                raise ValueError('Undefined GNN type called {}'.format(gnn_type))

            self.batch_norms.append(torch.nn.BatchNorm1d(emb_dim))

        for layer in range(num_layer - 1):
            self.mlp_virtualnode_list.append(torch.nn.Sequential(torch.nn.Linear(emb_dim, 2*emb_dim), torch.nn.BatchNorm1d(2*emb_dim), torch.nn.ReLU(), \
                                                    torch.nn.Linear(2*emb_dim, emb_dim), torch.nn.BatchNorm1d(emb_dim), torch.nn.ReLU()))


    def forward(self, batched_data):

        x, edge_index, edge_attr, batch = batched_data.x, batched_data.edge_index, batched_data.edge_attr, batched_data.batch

        ### virtual node embeddings for graphs
        virtualnode_embedding = self.virtualnode_embedding(torch.zeros(batch[-1].item() + 1).to(edge_index.dtype).to(edge_index.device))

        h_list = [self.atom_encoder(x)]
        for layer in range(self.num_layer):
            ### add message from virtual nodes to graph nodes
            h_list[layer] = h_list[layer] + virtualnode_embedding[batch]

            ### Message passing among graph nodes
            h = self.convs[layer](h_list[layer], edge_index, edge_attr)

            h = self.batch_norms[layer](h)
            if layer == self.num_layer - 1:
                #remove relu for the last layer
                h = F.dropout(h, self.drop_ratio, training = self.training)
            else:
                h = F.dropout(F.relu(h), self.drop_ratio, training = self.training)

            if self.residual:
                h = h + h_list[layer]

            h_list.append(h)

            ### update the virtual nodes
            if layer < self.num_layer - 1:
                ### add message from graph nodes to virtual nodes
                virtualnode_embedding_temp = global_add_pool(h_list[layer], batch) + virtualnode_embedding
                ### transform virtual nodes using MLP

                if self.residual:
                    virtualnode_embedding = virtualnode_embedding + F.dropout(self.mlp_virtualnode_list[layer](virtualnode_embedding_temp), self.drop_ratio, training = self.training)
                else:
                    virtualnode_embedding = F.dropout(self.mlp_virtualnode_list[layer](virtualnode_embedding_temp), self.drop_ratio, training = self.training)

        ### Different implementations of Jk-concat
        if self.JK == "last":
            node_representation = h_list[-1]
        elif self.JK == "sum":
            node_representation = 0
            for layer in range(self.num_layer + 1):
                node_representation += h_list[layer]

        return node_representation


# ---------------------------------------------------------------- OGB's gnn.py, as written
class GNN(torch.nn.Module):

    def __init__(self, num_tasks, num_layer = 5, emb_dim = 300,
                    gnn_type = 'gin', virtual_node = True, residual = False, drop_ratio = 0.5, JK = "last", graph_pooling = "mean"):
        '''
            num_tasks (int): number of labels to be predicted
            virtual_node (bool): whether to add virtual node or not
        '''

        super(GNN, self).__init__()

        self.num_layer = num_layer
        self.drop_ratio = drop_ratio
        self.JK = JK
        self.emb_dim = emb_dim
        self.num_tasks = num_tasks
        self.graph_pooling = graph_pooling

        if self.num_layer < 2:
            raise ValueError("Number of GNN layers must be greater than 1.")

        ### GNN to generate node embeddings
        if virtual_node:
            self.gnn_node = GNN_node_Virtualnode(num_layer, emb_dim, JK = JK, drop_ratio = drop_ratio, residual = residual, gnn_type = gnn_type)
        else:
            self.gnn_node = GNN_node(num_layer, emb_dim, JK = JK, drop_ratio = drop_ratio, residual = residual, gnn_type = gnn_type)


        ### Pooling function to generate whole-graph embeddings
        if self.graph_pooling == "sum":
            self.pool = global_add_pool
        elif self.graph_pooling == "mean":
            self.pool = global_mean_pool
        else:
            raise ValueError("Invalid graph pooling type.")

        self.graph_pred_linear = torch.nn.Linear(self.emb_dim, self.num_tasks)

    def forward(self, batched_data):
        h_node = self.gnn_node(batched_data)

        h_graph = self.pool(h_node, batched_data.batch)

        return self.graph_pred_linear(h_graph)


# ---------------------------------------------------------------- the two sides
class Batch:
    """PyG's ``Batch`` of the molecules: x, edge_index, edge_attr, batch."""

    def __init__(self, x, edge_index, edge_attr, batch):
        self.x, self.edge_index, self.edge_attr, self.batch = x, edge_index, edge_attr, batch


@lru_cache(maxsize=1)
def molecules():
    """The SMILES featurised by graphflow: (graphflow's batch of all, OGB's batch of all);
    read once (neither side writes into them)."""
    mols = featurize(SMILES)
    assert mols.ok.all()
    ptr = torch.zeros(len(SMILES) + 1, dtype=torch.int64)
    ptr[1:] = torch.from_numpy(mols.num_atoms).cumsum(0)
    shift = torch.repeat_interleave(ptr[:-1], torch.from_numpy(mols.num_edges))
    src, dst = torch.from_numpy(mols.src) + shift, torch.from_numpy(mols.dst) + shift
    atoms, bonds = torch.from_numpy(mols.atom_feat), torch.from_numpy(mols.bond_feat)
    g = dgl.graph((src, dst), num_nodes=int(ptr[-1]))
    g.edata["edge_feat"] = bonds.float()  # what the smiles loader stores
    batcher = GraphBatcher(Adjacency.from_graph(g, feat="edge_feat"), ptr, atoms.float())
    seg = torch.repeat_interleave(torch.arange(len(SMILES)), torch.from_numpy(mols.num_atoms))
    return (batcher.batch(torch.arange(len(SMILES))),
            Batch(atoms, torch.stack([src, dst]), bonds, seg))


@lru_cache(maxsize=1)
def host():
    return create_host()


def example(name, **changes):
    """graphflow's GraphModel as examples/``name`` builds it (width ``WIDTH``), in float64."""
    config = tomllib.loads((EXAMPLES / name).read_text())
    values = {k: v for k, v in config["model"].items() if k != "type"}
    values.update(hidden=WIDTH, **changes)
    info = host().registry.get("model", config["model"]["type"])
    options = parse_options(info.cls.Options, values, section="model",
                            component=config["model"]["type"], source=name, base_dir=".")
    train = config["train"]
    assert train["hidden"] == config["model"]["hidden"]  # the stack's output width
    encoder = info.cls(options).build(9, WIDTH)
    ours_batch, _ = molecules()
    return GraphModel.probe(encoder, ours_batch, train["readout_layers"], TASKS,
                            pooling=train["readout"], dropout=train["dropout"]).double()


def ogb_model(virtual_node, drop_ratio):
    torch.manual_seed(1)
    theirs = GNN(TASKS, num_layer=5, emb_dim=WIDTH, gnn_type="gin", virtual_node=virtual_node,
                 drop_ratio=drop_ratio).double()
    with torch.no_grad():
        for name, p in theirs.named_parameters():
            if name.endswith(".eps"):  # a learnt epsilon, not the 0 it starts at
                p.uniform_(-0.5, 0.5)
        for m in theirs.modules():
            if isinstance(m, nn.BatchNorm1d):  # not the identity they start as
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
        if virtual_node:
            theirs.gnn_node.virtualnode_embedding.weight.normal_()  # a trained one
    return theirs


def tables(encoder):
    """OGB's per-feature embedding tables, joined as graphflow's encoders hold them."""
    return torch.cat([e.weight for e in encoder.atom_embedding_list]
                     if hasattr(encoder, "atom_embedding_list")
                     else [e.weight for e in encoder.bond_embedding_list])


def pairs(ours, theirs):
    """(graphflow's, OGB's) tensor of every weight and batch-norm statistic of the node model,
    the encoders' tables as the joined ones (compared, not copied: see :func:`copy`)."""
    enc, ref = ours.encoder, theirs.gnn_node
    vn = enc.stack if hasattr(enc.stack, "mlps") else None
    stack = vn.stack if vn is not None else enc.stack
    out = [(enc.input_encoder.weight, ref.atom_encoder)]
    bn = ("weight", "bias", "running_mean", "running_var")
    for i, (layer, conv) in enumerate(zip(stack.layers, ref.convs)):
        mlp = layer.mlp
        outer = stack.norms[i] if i < len(stack.norms) else mlp[4]  # the last: norm_last
        assert isinstance(mlp[1], nn.BatchNorm1d) and isinstance(outer, nn.BatchNorm1d)
        assert mlp[0].weight.shape == conv.mlp[0].weight.shape == (2 * WIDTH, WIDTH)
        out += [(layer.eps, conv.eps), (layer.edge_encoder.weight, conv.bond_encoder)]
        out += [(getattr(mlp[j], n), getattr(conv.mlp[j], n)) for j in (0, 3)
                for n in ("weight", "bias")]
        out += [(getattr(mine, n), getattr(other, n)) for n in bn
                for mine, other in ((mlp[1], conv.mlp[1]), (outer, ref.batch_norms[i]))]
    if vn is not None:
        out.append((vn.embedding, ref.virtualnode_embedding.weight))
        for mine, other in zip(vn.mlps, ref.mlp_virtualnode_list):
            for j in range(len(other)):
                names = bn if isinstance(other[j], nn.BatchNorm1d) else \
                    ("weight", "bias") if isinstance(other[j], nn.Linear) else ()
                out += [(getattr(mine[j], n), getattr(other[j], n)) for n in names]
    return out


def resolve(value):
    return tables(value) if isinstance(value, (AtomEncoder, BondEncoder)) else value


def copy(ours, theirs):
    with torch.no_grad():
        for mine, other in pairs(ours, theirs):
            mine.copy_(resolve(other))
        ours.weight.copy_(theirs.graph_pred_linear.weight)
        ours.bias.copy_(theirs.graph_pred_linear.bias[None])


def grad_of(value):
    if isinstance(value, (AtomEncoder, BondEncoder)):
        return torch.cat([e.weight.grad for e in (value.atom_embedding_list
                          if isinstance(value, AtomEncoder) else value.bond_embedding_list)])
    return value.grad


def both(name, virtual_node, dropout):
    ours = example(name, dropout=dropout)
    theirs = ogb_model(virtual_node, dropout)
    copy(ours, theirs)
    return ours, theirs


CASES = [("bbbp_gin.toml", False), ("tox21_gin_virtual.toml", True)]
TARGET = torch.tensor([[1, 0, 1], [0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 0, 0], [0, 1, 1],
                       [1, 1, 1], [0, 0, 0]], dtype=torch.float64)


def check_grads(ours, theirs):
    for mine, other in pairs(ours, theirs):
        if mine.requires_grad:
            torch.testing.assert_close(mine.grad, grad_of(other))
    torch.testing.assert_close(ours.weight.grad, theirs.graph_pred_linear.weight.grad)
    torch.testing.assert_close(ours.bias.grad[0], theirs.graph_pred_linear.bias.grad)


# ---------------------------------------------------------------- the checks
def test_the_examples_build_ogbs_network():
    for name, virtual_node in CASES:
        config = tomllib.loads((EXAMPLES / name).read_text())
        assert config["model"].get("virtual_node", False) == virtual_node
        ours = example(name)
        theirs = ogb_model(virtual_node, 0.5)
        mine = sum(p.numel() for p in ours.parameters())
        assert mine == sum(p.numel() for p in theirs.parameters())  # not one weight more


@pytest.mark.parametrize("name, virtual_node", CASES)
def test_scores_and_gradients_match_ogbs_with_the_dropout_off(name, virtual_node):
    ours, theirs = both(name, virtual_node, 0.0)
    gf, pyg = molecules()
    ours.train(), theirs.train()
    mine, ref = ours(gf)[0], theirs(pyg)
    assert mine.shape == (len(SMILES), TASKS)
    torch.testing.assert_close(mine, ref)
    F.binary_cross_entropy_with_logits(mine, TARGET).backward()
    F.binary_cross_entropy_with_logits(ref, TARGET).backward()
    check_grads(ours, theirs)
    for mine_p, other in pairs(ours, theirs):  # one step's batch statistics, the same
        torch.testing.assert_close(mine_p, resolve(other))
    ours.eval(), theirs.eval()
    torch.testing.assert_close(ours(gf)[0], theirs(pyg))


@pytest.mark.parametrize("name, virtual_node", CASES)
def test_the_dropout_falls_where_ogbs_does(name, virtual_node, monkeypatch):
    """Both sides' dropout replaced by one that draws the k-th call's mask from seed k: the
    same tensors dropped in the same order give the same scores and gradients."""
    ours, theirs = both(name, virtual_node, 0.5)
    gf, pyg = molecules()
    calls = []

    def fixed(x, p=0.5, training=True, inplace=False):
        if not training or p == 0:
            return x
        gen = torch.Generator().manual_seed(len(calls))
        calls.append((tuple(x.shape), p))
        return x * (torch.rand(x.shape, generator=gen) >= p).to(x.dtype) / (1 - p)

    monkeypatch.setattr(stack_module, "dropout", fixed)  # graphflow's stack
    monkeypatch.setattr(F, "dropout", fixed)  # graphflow's virtual node, OGB's code
    ours.train(), theirs.train()
    mine = ours(gf)[0]
    ours_calls, calls[:] = list(calls), []
    ref = theirs(pyg)
    n, b = int(gf.x.shape[0]), len(SMILES)
    layers = [((n, WIDTH), 0.5)] * 5
    vn = [((b, WIDTH), 0.5)] * 4 if virtual_node else []
    order = [c for i in range(5) for c in [layers[i]] + vn[i:i + 1]]
    assert ours_calls == calls == order
    torch.testing.assert_close(mine, ref)
    F.binary_cross_entropy_with_logits(mine, TARGET).backward()
    F.binary_cross_entropy_with_logits(ref, TARGET).backward()
    check_grads(ours, theirs)


def test_the_gin_recipe_defaults_are_unchanged():
    """The new options default to the GIN recipe: MLPs of the layer's width, dropout on each
    layer's input, the last layer activated after its norm."""
    info = host().registry.get("model", "gin")
    options = parse_options(info.cls.Options, {"hidden": 8, "layers": 3, "norm": "batch",
                                               "norm_last": True},
                            section="model", component="gin", source="t.toml", base_dir=".")
    stack = info.cls(options).build(5, 8)
    assert [layer.mlp[0].out_features for layer in stack.layers] == [8, 8, 8]
    assert isinstance(stack.layers[-1].mlp[-1], nn.ReLU)
    assert stack.drops == [0.5, 0.5, 0.5] and stack.out_drops == [0.0, 0.0, 0.0]
