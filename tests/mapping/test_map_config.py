"""The mapping configuration (``conba map --config FILE``, docs/MAP_CONFIG.md): the scoring constants are keys
of one JSON file, not flags; the old flags point there in one line; ``conba map --help`` stays short."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from conba.cli.map_cmd import MOVED
from conba.errors import ConfigError
from conba.mapping.config import MapConfig
from helpers import map_config

DOC = Path(__file__).resolve().parents[2] / "docs" / "MAP_CONFIG.md"
MAX_MAP_OPTIONS = 20


def _options(help_text: str) -> list[str]:
    section = help_text.split("Options:")[1]
    return [line.split()[0].rstrip(",") for line in section.splitlines() if re.match(r"^  -", line)]


def test_map_help_has_at_most_20_options():
    out = CliRunner().invoke(cli, ["map", "--help"])
    assert out.exit_code == 0 and "--config FILE" in out.output
    assert len(_options(out.output)) <= MAX_MAP_OPTIONS, _options(out.output)


@pytest.mark.parametrize("flag", sorted(MOVED))
def test_every_moved_flag_points_to_its_key_in_one_line(flag, tmp_path):
    out = CliRunner().invoke(cli, ["map", str(tmp_path), str(tmp_path), flag, "1"])
    assert out.exit_code == 2
    (line,) = [x for x in out.output.splitlines() if x.startswith("Error:")]
    key = flag.lstrip("-").removeprefix("no-").replace("-", "_")
    assert line == (f"Error: {flag} moved to the mapping configuration: `conba map --config FILE` with "
                    f'{{"{key}": ...}} (docs/MAP_CONFIG.md)')
    assert key in MapConfig().to_dict() and f"`{key}`" in DOC.read_text(encoding="utf-8")
    assert not (tmp_path / ".conba-index").exists()


def test_the_documented_defaults_are_the_config_defaults():
    block = DOC.read_text(encoding="utf-8").split("```json\n")[1].split("```")[0]
    assert json.loads(block) == MapConfig().to_dict()


def test_a_file_sets_any_subset_and_refuses_unknown_keys(tmp_path):
    loaded = MapConfig.load(map_config(tmp_path, relax=0, align=False, min_coverage=90))
    assert (loaded.relax, loaded.align, loaded.min_coverage, loaded.margin) == (0, False, 90, MapConfig().margin)
    bad = map_config(tmp_path, marign=0.1)
    with pytest.raises(ConfigError, match=rf"^unknown mapping configuration key 'marign' in {re.escape(bad)} "):
        MapConfig.load(bad)
    wrong = map_config(tmp_path, align="no")
    with pytest.raises(ConfigError, match="field 'align' must be true or false"):
        MapConfig.load(wrong)


def test_the_command_line_threshold_wins_over_the_file(tmp_path, monkeypatch):
    seen = {}

    def fake_map_index(idx, sources, targets, source_lang, target_lang, config):
        seen["config"] = config
        raise ConfigError("stop here")

    class FakeIndex:  # no model, no index: only what map_cmd hands over is looked at
        def __init__(self, *args, **kwargs):
            seen["lexical_weight"] = kwargs.get("lexical_weight")

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def manifest(self):
            return {}

    monkeypatch.setattr("conba.mapping.map_index", fake_map_index)
    monkeypatch.setattr("conba.index.Index", FakeIndex)
    monkeypatch.setattr("conba.index.model.placement.place_index_model", lambda *args: None)
    base = ["map", "-i", str(tmp_path / "idx"), "--source-lang", "java", "--target-lang", "python"]
    config = map_config(tmp_path, threshold=0.5, relax=0.3, lexical_weight=0.25)
    for extra, threshold in (([], 0.5), (["-t", "0.7"], 0.7), (["-t", "auto"], None)):
        out = CliRunner().invoke(cli, [*base, "--config", config, *extra])
        assert "stop here" in out.output
        assert seen.pop("config") == MapConfig(threshold=threshold, relax=0.3, lexical_weight=0.25)
        assert seen.pop("lexical_weight") == 0.25
    CliRunner().invoke(cli, [*base, "-t", "0.6"])
    assert seen.pop("config") == MapConfig(threshold=0.6) and seen.pop("lexical_weight") is None
