"""``graphflow serve RUN_DIR``: the model of a run as an HTTP JSON service (Starlette on
uvicorn; the ``serve`` extra). SIGTERM or Ctrl-C stop it cleanly: uvicorn finishes the
requests in flight, then the process exits 0."""

from __future__ import annotations

import argparse
import signal
from pathlib import Path


def add_commands(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    help_ = "serve a trained model (a run's bundle) over HTTP"
    p = sub.add_parser("serve", parents=[common], help=help_, description=help_)
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR",
                   help="a training run's out_dir (its model/ bundle), or a bundle folder")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default "
                                                       "127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--data", type=Path, metavar="PIPELINE",
                   help="the served graph: a pipeline TOML's [load] and [[transform]] "
                        "(default: the training run's own data sections)")
    p.add_argument("--stage", metavar="SECTION",
                   help='the bundle of this stage, e.g. "train.0" (default: the last stage '
                        "that produced a model, e.g. a sparsify stage's pruned model)")
    p.add_argument("--batch-size", type=int, metavar="N",
                   help="nodes per batch of the start-up inference (default: as in training)")
    p.add_argument("--max-bytes", type=int, default=None, metavar="N",
                   help="request body limit in bytes (default 8 MiB)")
    p.add_argument("--max-items", type=int, default=100_000, metavar="N",
                   help="ids, pairs or nodes per request (default 100000)")
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    from graphflow.errors import ConfigError, EnvironmentProblem

    try:
        import uvicorn

        from graphflow.serve.app import MAX_BYTES, create_app
    except ImportError as exc:
        raise EnvironmentProblem(f"graphflow serve needs {exc.name}: pip install "
                                 f"'graphflow[serve]'") from None
    from graphflow.serve.service import start_service

    if not 0 <= args.port < 65536:
        raise ConfigError(f"--port {args.port}: give a port in 0..65535")
    service = start_service(args.run_dir, data=args.data, stage=args.stage,
                            batch_size=args.batch_size)
    service.max_items = args.max_items
    app = create_app(service, max_bytes=args.max_bytes or MAX_BYTES)
    if hasattr(service, "line"):  # a knowledge-graph service: no graph
        size = service.line()
    else:
        graphs = service.data.graphs
        size = (f"{graphs.num_graphs:,} graphs, " if graphs is not None else "") + \
            f"{service.data.num_nodes:,} nodes"
    print(f"graphflow: serving {service.bundle.kind} model {service.bundle.path} on "
          f"http://{args.host}:{args.port} ({size})", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, host=args.host, port=args.port,
                                           log_level="warning", access_log=False,
                                           timeout_graceful_shutdown=10))
    stopped: list[str] = []
    # uvicorn handles SIGTERM while it runs (stop accepting, finish the requests in flight),
    # then re-raises it to the handler it found: this one notes it, so the exit is clean.
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: stopped.append("SIGTERM"))
    try:
        server.run()
    finally:
        signal.signal(signal.SIGTERM, previous)
    print(f"graphflow: server stopped{' by ' + stopped[0] if stopped else ''}", flush=True)
    return 0
