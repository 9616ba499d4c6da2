"""`graphflow plugins` and `graphflow describe`."""

import json

from graphflow.components import KINDS


def test_plugins_json_lists_every_kind(cli):
    code, out, err = cli("plugins", "--json")
    assert code == 0, err
    table = json.loads(out)
    for kind in KINDS:
        assert table["components"][kind], f"no {kind} registered"
    names = {p["name"]: p for p in table["plugins"]}
    loaders = names["loaders"]
    assert loaders["dist"] == "graphflow" and loaders["first_party"] is True
    assert loaders["source"].endswith("plugins/loaders/__init__.py")
    assert set(loaders["components"]) == {"loader"}


def test_plugins_lists_third_party_plugins(cli, toy_entry_point):
    code, out, _ = cli("plugins", "--json")
    toy = next(p for p in json.loads(out)["plugins"] if p["name"] == "toy")
    assert toy["first_party"] is False
    assert toy["components"] == {"loader": ["tiny"], "task": ["count"], "exporter": ["text"]}
    code, out, _ = cli("plugins")
    assert "toy  (in-process)" in out
    assert "    loader: tiny" in out


def test_describe_shows_docs_and_options(cli, toy_entry_point):
    code, out, _ = cli("describe", "count")
    assert code == 0
    assert out.startswith('task "count" (plugin "toy")')
    assert "Logs one record per epoch" in out
    assert "  epochs: int  (default 3)\n      number of epochs" in out


def test_describe_disambiguates_by_kind(cli, toy_entry_point):
    code, out, _ = cli("describe", "exporter:text")
    assert code == 0 and out.startswith('exporter "text"')
    code, _, err = cli("describe", "exportr:text")
    assert code == 1 and 'unknown kind \'exportr\' (did you mean "exporter"?)' in err


def test_describe_unknown_suggests(cli, toy_entry_point):
    code, _, err = cli("describe", "cuont")
    assert code == 1
    assert 'no component "cuont" (did you mean "count"?)' in err


def test_output_into_a_closed_pipe_is_not_an_error(monkeypatch, capsys):
    """`graphflow plugins | head -1`: the reader leaves early; graphflow exits quietly."""
    import os
    import sys

    from graphflow.cli.main import main

    read_end, write_end = os.pipe()
    os.close(read_end)
    closed = os.fdopen(write_end, "w")
    monkeypatch.setattr(sys, "stdout", closed)
    try:
        assert main(["plugins", "--json"]) == 0
    finally:
        monkeypatch.undo()
    assert "BrokenPipeError" not in capsys.readouterr().err


def test_a_broken_pipe_elsewhere_is_an_internal_error(monkeypatch, capsys):
    """Only a closed stdout is the reader leaving; any other broken pipe is a failure."""
    from graphflow.cli import info
    from graphflow.cli.main import main

    def broken(args):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(info, "cmd_plugins", broken)
    assert main(["plugins"]) == 1
    assert "internal error: BrokenPipeError" in capsys.readouterr().err
