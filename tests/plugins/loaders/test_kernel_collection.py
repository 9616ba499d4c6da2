"""The kernel_collection loader: MUTAG from .mat and from .npz, and bad files."""

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from graphflow.errors import DataError
from graphflow_plugins.loaders.graph_collection import (KernelCollectionLoader,
                                                        KernelCollectionOptions)


def load(path, **options):
    return KernelCollectionLoader(KernelCollectionOptions(path=path, **options)).load(None)


def test_mutag_mat_and_npz_give_the_same_collection(mutag_root):
    a, b = load(mutag_root / "MUTAG.mat"), load(mutag_root / "MUTAG.npz")
    for data in (a, b):
        assert data.graphs.num_graphs == 188 and data.num_nodes == 3371
        assert data.num_edges == 7442
        assert torch.bincount(data.graphs.labels).tolist() == [63, 125]
        assert data.graph.ndata["feat"].shape == (3371, 7)
    assert torch.equal(a.graphs.graph_ptr, b.graphs.graph_ptr)
    assert torch.equal(a.graphs.labels, b.graphs.labels) and a.graphs.classes == b.graphs.classes
    sa, da = a.graph.edges()
    sb, db = b.graph.edges()
    assert torch.equal(sa, sb) and torch.equal(da, db)
    assert torch.equal(a.graph.ndata["feat"], b.graph.ndata["feat"])


def save(tmp_path, **arrays):
    path = tmp_path / "set.npz"
    np.savez(path, **arrays)
    return path


def parts(adj):
    adj = sp.csr_matrix(adj)
    return {"adj_data": adj.data, "adj_indice": adj.indices, "adj_indptr": adj.indptr,
            "adj_shape": np.array(adj.shape)}


def test_an_edge_between_two_graphs_is_refused(tmp_path):
    adj = np.zeros((4, 4))
    adj[1, 2] = adj[2, 1] = 1  # node 1 is in graph 1, node 2 in graph 2
    path = save(tmp_path, **parts(adj), graph_ind=np.array([1, 1, 2, 2]),
                labels=np.array([1, -1]), responses=np.array([1, 1, 2, 2]))
    with pytest.raises(DataError, match=r"set.npz, adj\[2, 1\]: the edge joins graph 2 and "
                                        r"graph 1"):
        load(path)


def test_disagreeing_node_counts_and_missing_labels(tmp_path):
    adj = np.eye(4)
    path = save(tmp_path, **parts(adj), graph_ind=np.array([1, 1, 2]),
                labels=np.array([1, -1]), responses=np.array([1, 1, 2, 2]))
    with pytest.raises(DataError, match="'graph_ind' has 3 entries but 'A' has 4 nodes"):
        load(path)
    path = save(tmp_path, **parts(adj), graph_ind=np.array([1, 1, 2, 2]),
                labels=np.array([1]), responses=np.array([1, 1, 2, 2]))
    with pytest.raises(DataError, match="graph 2 .and any after it. has no label"):
        load(path)


def test_unsorted_graph_index(tmp_path):
    path = save(tmp_path, **parts(np.eye(4)), graph_ind=np.array([1, 2, 1, 2]),
                labels=np.array([1, -1]), responses=np.array([1, 1, 2, 2]))
    with pytest.raises(DataError, match="graph_ind line 3: graph 1 comes after graph 2"):
        load(path)


def test_dgl_collection_matches_the_kernel_file(mutag_root, tmp_path):
    from graphflow.compat.dgl import dgl
    from graphflow_plugins.loaders.dgl_collection import DglCollectionLoader, DglCollectionOptions

    ref = load(mutag_root / "MUTAG.npz")
    whole = ref.graph
    whole.set_batch_num_nodes(ref.graphs.sizes())
    src, _ = whole.edges()
    owner = torch.searchsorted(ref.graphs.graph_ptr, src, right=True) - 1
    whole.set_batch_num_edges(torch.bincount(owner, minlength=188))
    graphs = dgl.unbatch(whole)
    path = tmp_path / "mutag.bin"
    dgl.save_graphs(str(path), graphs, {"glabel": ref.graphs.labels})
    data = DglCollectionLoader(DglCollectionOptions(path=path, labels="glabel")).load(None)
    assert torch.equal(data.graphs.graph_ptr, ref.graphs.graph_ptr)
    assert torch.equal(data.graphs.labels, ref.graphs.labels)
    assert torch.equal(data.graph.ndata["feat"], ref.graph.ndata["feat"])
    with pytest.raises(DataError, match="no label tensor 'labels'; its labels: glabel"):
        DglCollectionLoader(DglCollectionOptions(path=path)).load(None)


def test_damaged_files_are_one_data_error_not_a_crash(tmp_path):
    """The loader reads through the structural checks of graphflow.io.matfile / npzfile:
    the .mat bytes that crash scipy's reader, a cut .npz and CSR parts that point outside
    the matrix are each one DataError naming the file."""
    from fuzzing.found import scipy_segfault_mat

    mat = tmp_path / "graphs.mat"
    mat.write_bytes(scipy_segfault_mat())
    with pytest.raises(DataError, match=r"graphs.mat is not a readable MATLAB file \(element "
                                        r"type 78 at byte 208"):
        load(mat)
    adj = np.eye(2)
    good = save(tmp_path, **parts(adj), graph_ind=np.array([1, 2]), labels=np.array([1, -1]),
                responses=np.array([1, 1]))
    cut = tmp_path / "cut.npz"
    cut.write_bytes(good.read_bytes()[:-40])
    with pytest.raises(DataError, match="cut.npz"):
        load(cut)
    bad = parts(adj)
    bad["adj_indice"] = np.array([0, 7])  # column 7 of a 2 x 2 matrix
    path = save(tmp_path, **bad, graph_ind=np.array([1, 2]), labels=np.array([1, -1]),
                responses=np.array([1, 1]))
    with pytest.raises(DataError, match=r"the CSR parts adj_\*: a column index lies outside"):
        load(path)
