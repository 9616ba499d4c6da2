from pathlib import Path

import pytest

from graphflow.config import apply_override, load_config, validate_config
from graphflow.errors import ConfigError, UnknownComponentError


def write(tmp_path: Path, text: str, name: str = "p.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_valid_pipeline_is_typed(tmp_path, toy_host, toy_pipeline):
    config = load_config(write(tmp_path, toy_pipeline), toy_host.registry)
    assert config.settings.name == "toy" and config.settings.seed == 7
    assert config.load.type == "tiny" and config.load.plugin == "toy"
    assert config.train[0].task.options.epochs == 3
    assert config.exports[0].section == "export.0"
    # relative paths resolve against the pipeline file's folder
    assert config.exports[0].options.path == tmp_path.resolve() / "emb.txt"


def test_bad_toml_gives_line_and_column(tmp_path, toy_host):
    path = write(tmp_path, '[pipeline]\nname = "x"\nseed = \n')
    with pytest.raises(ConfigError) as err:
        load_config(path, toy_host.registry)
    assert str(path) in str(err.value)
    assert "invalid TOML" in str(err.value)
    assert "line 3, column 8" in str(err.value)


def test_missing_pipeline_file(tmp_path, toy_host):
    with pytest.raises(ConfigError, match="pipeline file not found: .*nope.toml"):
        load_config(tmp_path / "nope.toml", toy_host.registry)


def test_unknown_section_suggests(tmp_path, toy_host):
    with pytest.raises(ConfigError, match=r'unknown section \[trian\] \(did you mean "train"\?\)'):
        load_config(write(tmp_path, '[load]\ntype="tiny"\n[trian]\ntype="count"\n'),
                    toy_host.registry)


def test_unknown_pipeline_key_suggests(tmp_path, toy_host):
    with pytest.raises(ConfigError, match='pipeline.sed: unknown key \\(did you mean "seed"\\?\\)'):
        load_config(write(tmp_path, '[pipeline]\nsed = 1\n[load]\ntype="tiny"\n'),
                    toy_host.registry)


def test_bad_device_value(tmp_path, toy_host):
    with pytest.raises(ConfigError, match='pipeline.device: expected "auto", "cpu", "cuda" or '
                                          '"cuda:N", got "gpu"'):
        load_config(write(tmp_path, '[pipeline]\ndevice = "gpu"\n[load]\ntype="tiny"\n'),
                    toy_host.registry)


def test_bad_allocator_value(tmp_path, toy_host):
    with pytest.raises(ConfigError, match='pipeline.allocator: expected "retain" .* or "system" '
                                          r'\(malloc as it is\), got "jemalloc"'):
        load_config(write(tmp_path, '[pipeline]\nallocator = "jemalloc"\n[load]\ntype="tiny"\n'),
                    toy_host.registry)


def test_bad_gemm_value_suggests_the_near_match(tmp_path, toy_host):
    with pytest.raises(ConfigError, match='pipeline.gemm: expected "auto" .*"onednn" or "torch" '
                                          r'for the CPU dense products, got "oneDNN" \(did you '
                                          r'mean "onednn"\?\)'):
        load_config(write(tmp_path, '[pipeline]\ngemm = "oneDNN"\n[load]\ntype="tiny"\n'),
                    toy_host.registry)


@pytest.mark.filterwarnings("ignore:TF32 acceleration")
def test_gemm_onednn_without_onednn_is_refused_at_validation(tmp_path, toy_host):
    import torch

    with torch.backends.mkldnn.flags(enabled=False):
        with pytest.raises(ConfigError, match='pipeline.gemm: "onednn" needs torch built with '
                                              'oneDNN .*; use "auto" or "torch"'):
            load_config(write(tmp_path, '[pipeline]\ngemm = "onednn"\n[load]\ntype="tiny"\n'),
                        toy_host.registry)


def test_unknown_type_lists_choices(tmp_path, toy_host):
    with pytest.raises(UnknownComponentError) as err:
        load_config(write(tmp_path, '[load]\ntype = "tinny"\n'), toy_host.registry)
    msg = str(err.value)
    assert 'load.type: unknown loader type "tinny" (did you mean "tiny"?)' in msg
    assert "choices:" in msg and "tiny" in msg.split("choices:")[1]


def test_missing_type_and_missing_load(tmp_path, toy_host):
    with pytest.raises(ConfigError, match=r'\[load\] needs type = "<loader>"; choices: .*tiny'):
        load_config(write(tmp_path, "[load]\npath = 'x'\n"), toy_host.registry)
    with pytest.raises(ConfigError, match=r"missing \[load\] section"):
        load_config(write(tmp_path, "[pipeline]\nname = 'x'\n"), toy_host.registry)


def test_unknown_option_in_train_suggests(tmp_path, toy_host):
    text = '[load]\ntype = "tiny"\n[train]\ntype = "count"\nepoch = 5\n'
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, text), toy_host.registry)
    assert "train.epoch" in str(err.value) and 'did you mean "epochs"?' in str(err.value)


def test_overrides(tmp_path, toy_host, toy_pipeline):
    config = load_config(
        write(tmp_path, toy_pipeline), toy_host.registry,
        overrides=["train.epochs=9", "pipeline.name=other", "export.0.path=x/y.txt",
                   "train.lr=0.5"],
        device="cpu", out_dir=tmp_path / "o")
    assert config.train[0].task.options.epochs == 9
    assert config.train[0].task.options.lr == 0.5
    assert config.settings.name == "other"  # not valid TOML: taken as a string
    assert config.settings.device == "cpu"
    assert config.settings.out_dir == (tmp_path / "o").resolve()
    assert config.exports[0].options.path == tmp_path.resolve() / "x" / "y.txt"


@pytest.mark.parametrize("assignment, message", [
    ("train.epochs", "expected section.key=value"),
    ("epochs=3", "expected section.key=value"),
    ("trian.epochs=3", 'unknown section \'trian\' \\(did you mean "train"\\?\\)'),
    ("export.3.path='a'", "export.3 needs an index below 1"),
    ("export.path='a'", r"export.path: export is a list of 1 \[\[export\]\] tables; add an "
                        r"index: export.0.path$"),
    ("transform.0.k=1", r"the pipeline has no \[\[transform\]\]"),
    ("train.1.epochs=3", r"train.1.epochs: the pipeline has one \[train\] table, entry 0"),
])
def test_bad_overrides(assignment, message, toy_pipeline):
    import tomllib

    raw = tomllib.loads(toy_pipeline)
    with pytest.raises(ConfigError, match=message):
        apply_override(raw, assignment)


def test_a_list_section_without_an_index_names_the_keys_to_write():
    raw = {"train": [{"type": "count"}, {"type": "count"}]}
    with pytest.raises(ConfigError, match=r"^--set train.epochs: train is a list of 2 "
                                          r"\[\[train\]\] tables; add an index: "
                                          r"train.0.epochs to train.1.epochs$"):
        apply_override(raw, "train.epochs=3")


def test_index_0_of_a_single_table_section_is_that_table(tmp_path, toy_host, toy_pipeline):
    # [train] is one table in toy_pipeline; examples write train.0.key for [[train]] lists
    config = load_config(write(tmp_path, toy_pipeline), toy_host.registry,
                         overrides=["train.0.epochs=7"])
    assert config.train[0].task.options.epochs == 7


def test_override_type_error_names_key(tmp_path, toy_host, toy_pipeline):
    with pytest.raises(ConfigError, match=r'train.epochs: expected int, got "many" \(string\)'):
        load_config(write(tmp_path, toy_pipeline), toy_host.registry,
                    overrides=["train.epochs=many"])


def test_train_list_with_own_subsections(tmp_path, toy_host):
    raw = {
        "load": {"type": "tiny"},
        "train": [{"type": "count", "epochs": 1}, {"type": "count", "epochs": 2}],
    }
    config = validate_config(raw, toy_host.registry, source=tmp_path / "p.toml")
    assert [t.task.section for t in config.train] == ["train.0", "train.1"]
    assert [t.task.options.epochs for t in config.train] == [1, 2]
    resolved = config.resolved()
    assert resolved["train"][1] == {"type": "count", "epochs": 2, "lr": 0.1}


def test_resolved_config_and_digest(tmp_path, toy_host, toy_pipeline):
    path = write(tmp_path, toy_pipeline)
    a = load_config(path, toy_host.registry)
    b = load_config(path, toy_host.registry)
    c = load_config(path, toy_host.registry, overrides=["train.epochs=4"])
    assert a.resolved()["load"] == {"type": "tiny", "fail": "", "path": None}
    assert a.resolved()["pipeline"]["seed"] == 7
    assert a.digest() == b.digest() != c.digest()


SAMPLED = """
[load]
type = "synthetic"
[sample]
type = "neighbor"
fanouts = {fanouts}
[model]
type = "{model}"
[train]
type = "{task}"
epochs = 1
"""


@pytest.mark.parametrize("task, model, fanouts, layers", [
    ("node_classification", "sage", "[10]", 2),
    ("link_prediction", "gcn", "[5, 5, 5]", 2),
    ("node_classification", "sgc", "[10, 10]", 1),
])
def test_fanouts_that_do_not_match_the_model_fail_when_the_pipeline_is_read(
        tmp_path, toy_host, task, model, fanouts, layers):
    """Before any data loads (graphflow validate, and run before [load]), naming both sections."""
    path = write(tmp_path, SAMPLED.format(task=task, model=model, fanouts=fanouts))
    with pytest.raises(ConfigError) as err:
        load_config(path, toy_host.registry)
    assert str(err.value).startswith(f"{path}: [sample] fanouts = {fanouts} has ")
    assert f"but [model] {model} has {layers} message-passing layers" in str(err.value)


def test_matching_fanouts_load_and_leave_the_random_state_alone(tmp_path, toy_host):
    import torch

    path = write(tmp_path, SAMPLED.format(task="node_classification", model="gat",
                                          fanouts="[10, 5]"))
    torch.manual_seed(123)
    state = torch.random.get_rng_state()
    config = load_config(path, toy_host.registry)  # builds the model once to count its layers
    assert config.train[0].sample.options.fanouts == [10, 5]
    assert torch.equal(torch.random.get_rng_state(), state)
