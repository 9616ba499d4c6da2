"""DGL's own distributed engine through graphflow's compat module: a DistGraphServer and a
DistGraph trainer on loopback read a partition that ``graphflow partition`` wrote (the
servers check ``isinstance(g, dgl.graphbolt.FusedCSCSamplingGraph)`` of the stub)."""

import textwrap

from graphflow.distributed.nproc import free_port

ROLE = textwrap.dedent('''
    import os, sys
    from graphflow.compat.dgl import dgl
    ip, part, role = sys.argv[1], sys.argv[2], sys.argv[3]
    if role == "server":
        dgl.distributed.DistGraphServer(0, ip, 1, 1, part, graph_format=["csc"]).start()
        sys.exit(0)
    os.environ.update(DGL_DIST_MODE="distributed", DGL_NUM_SERVER="1", DGL_NUM_SAMPLER="0")
    dgl.distributed.initialize(ip)
    g = dgl.distributed.DistGraph("edgelist_gcn", part_config=part)
    nids = dgl.distributed.node_split(g.ndata["train_mask"], g.get_partition_book())
    frontier = dgl.distributed.sample_neighbors(g, nids[:8], 3)
    print("nodes", g.num_nodes(), "train", len(nids), "feat", tuple(g.ndata["feat"][nids].shape),
          "sampled", frontier.num_edges(), flush=True)
    dgl.distributed.exit_client()
''')


def test_distgraph_server_and_trainer_read_a_graphflow_partition(cli, example, spawn,
                                                                 background, tmp_path):
    parts = tmp_path / "parts"
    assert cli("partition", example, "--parts", "1", "--out", parts, "--quiet")[0] == 0
    (tmp_path / "ip.txt").write_text(f"127.0.0.1 {free_port()}\n")
    (tmp_path / "role.py").write_text(ROLE)
    args = [str(tmp_path / "role.py"), str(tmp_path / "ip.txt"), str(parts / "graph.json")]
    server = background([*args, "server"])
    trainer = spawn([*args, "trainer"], timeout=90)
    assert trainer.returncode == 0, trainer.stderr
    assert "nodes 150 train 90 feat (90, 8) sampled" in trainer.stdout
    assert server.wait(timeout=30) == 0  # the server stops when its last client leaves
