"""graphflow.capabilities: a third-party task's refusals, their conditions and wording, and the
one check that applies them when the pipeline is read."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from graphflow.api import Task, hookimpl, option, refuses
from graphflow.capabilities import Refusal, check_pipeline, refusal
from graphflow.config import validate_config
from graphflow.errors import ConfigError


class PairTask(Task):
    """Scores pairs; no predictions, no ONNX; refuses a [sample] on typed graphs only."""

    name = "pairs"
    summary = "a third-party task with refusals"
    refusals = (*refuses("predictions", "onnx", reason="it scores node pairs",
                         alternative='export what = "links"'),
                *refuses("sampled", reason="typed pairs train full batch",
                         alternative="drop the [sample] section", when={"typed"}))

    @dataclass
    class Options:
        epochs: int = option(1, "epochs")

    def run(self, ctx):
        raise AssertionError("the check refuses before any stage runs")


class PairPlugin:
    @hookimpl
    def graphflow_register_tasks(self, register):
        register(PairTask)


@pytest.fixture
def registry():
    from graphflow.manager import create_host

    return create_host(plugins={"pairs": PairPlugin()}).registry


def config(registry, tmp_path, text: str):
    import tomllib

    return validate_config(tomllib.loads('[load]\ntype = "synthetic"\n' + text), registry,
                           source=tmp_path / "p.toml")


def test_a_refusal_holds_under_its_conditions_and_reads_as_one_line():
    typed_only = Refusal("sampled", "typed pairs train full batch", "drop [sample]",
                         frozenset({"typed"}))
    assert typed_only.applies(typed=True, sampled=True)
    assert not typed_only.applies(typed=False, sampled=True)
    assert typed_only.line("train.1", "pairs") == (
        "[train.1] pairs cannot train on sampled minibatches ([sample]): typed pairs train "
        "full batch; drop [sample]")
    assert refusal(PairTask, "sampled", typed=False, sampled=True) is None
    assert refusal(PairTask, "nproc").reason.startswith("it has no data-parallel training")
    with pytest.raises(ValueError, match="unknown run-level feature 'gpu'"):
        Refusal("gpu", "no", "no")


def test_the_check_refuses_a_third_party_tasks_exports_and_nproc(registry, tmp_path):
    ok = config(registry, tmp_path, '[train]\ntype = "pairs"\n[[export]]\ntype = "parquet"\n'
                                    'what = "embeddings"\n')
    check_pipeline(ok)
    with pytest.raises(ConfigError) as info:
        check_pipeline(ok, nproc=2)
    assert str(info.value) == ("[train] pairs cannot run data-parallel (--nproc): it has no "
                               "data-parallel training yet; run it without --nproc (or with "
                               "--nproc 1)")
    asked = config(registry, tmp_path, '[train]\ntype = "pairs"\n[[export]]\ntype = "parquet"\n'
                                       'what = "predictions"\n')
    with pytest.raises(ConfigError) as info:
        check_pipeline(asked)
    assert str(info.value) == ('[train] pairs cannot export predictions: it scores node pairs; '
                               'export what = "links" (asked by [export.0] parquet)')


def test_an_export_passes_when_an_earlier_stage_makes_it(registry, tmp_path):
    two = config(registry, tmp_path, '[model]\ntype = "gcn"\n[[train]]\ntype = '
                                     '"node_classification"\n[[train]]\ntype = "pairs"\n'
                                     '[[export]]\ntype = "parquet"\nwhat = "predictions"\n')
    check_pipeline(two)  # node_classification makes them; the exporter writes its artifact


def test_amp_asked_of_a_task_without_precision_gets_its_refusal_line(registry, tmp_path):
    class NoAmp(PairTask):
        """Trains no network."""

        name = "no_amp"
        refusals = refuses("amp", reason="it trains no network", alternative="drop amp")

    class NoAmpPlugin:
        @hookimpl
        def graphflow_register_tasks(self, register):
            register(NoAmp)

    from graphflow.manager import create_host

    registry = create_host(plugins={"no_amp": NoAmpPlugin()}).registry
    with pytest.raises(ConfigError) as info:
        config(registry, tmp_path, '[train]\ntype = "no_amp"\namp = true\n')
    assert str(info.value) == ("[train] no_amp cannot train in mixed precision: it trains no "
                               "network; drop amp")


@pytest.mark.parametrize("exporter", ["onnx", "torchscript"])
def test_a_typed_model_exported_with_block_inputs_is_refused_by_validate(cli, tmp_path,
                                                                          exporter):
    def validate(model: str, inputs: str):
        path = tmp_path / "p.toml"
        path.write_text(f'[load]\ntype = "synthetic"\n[model]\ntype = "{model}"\n[train]\n'
                        f'type = "node_classification"\n[[export]]\ntype = "{exporter}"\n'
                        f'inputs = "{inputs}"\n')
        return cli("validate", path)

    code, _, err = validate("rgcn", "block")
    assert code != 0 and "Traceback" not in err
    assert err.strip().splitlines() == [
        f'graphflow: error: [export.0] {exporter} cannot export the typed model of [train] with '
        f'inputs = "block": a typed model takes the whole typed graph, not sampled blocks; '
        f'export it with inputs = "full"']
    assert validate("rgcn", "full")[0] == 0
    assert validate("gcn", "block")[0] == 0  # block inputs are for untyped models
