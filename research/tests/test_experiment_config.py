"""The research suite's ExperimentConfig follows conba's config protocol (strict JSON, one-line errors)."""

from __future__ import annotations

import json

import pytest

from conba.errors import ConfigError
from conba.utils.config_keys import JsonConfig
from conba_research.config import ExperimentConfig


def test_experiment_config_refuses_an_unknown_key_naming_it_and_the_file(tmp_path):
    assert issubclass(ExperimentConfig, JsonConfig)
    good = ExperimentConfig()
    path = tmp_path / "c.json"
    good.save(path)
    assert ExperimentConfig.load(path) == good  # round trip
    path.write_text(json.dumps({**good.to_dict(), "colour": "red"}))
    with pytest.raises(ConfigError, match=rf"^unknown {ExperimentConfig.config_name} key 'colour' in {path} \(known: "):
        ExperimentConfig.load(path)
