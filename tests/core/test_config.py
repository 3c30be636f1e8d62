"""groundwork.toml: each setting flag > environment > file > default; relative paths from the
file's folder; severities for finding codes only."""

from __future__ import annotations

import pytest

from groundwork.core import config
from groundwork.core.errors import ConfigError


@pytest.mark.parametrize("setting, env", [("warehouse", "GROUNDWORK_WAREHOUSE"), ("sources", "GROUNDWORK_SOURCES"),
                                          ("reports", "GROUNDWORK_REPORTS")])
def test_each_setting_flag_then_environment_then_file_then_default(tmp_path, monkeypatch, setting, env):
    monkeypatch.delenv(env, raising=False)
    (tmp_path / "etc").mkdir()
    path = tmp_path / "etc" / "groundwork.toml"
    path.write_text(f'{setting} = "from-file"\n', encoding="utf-8")
    cfg = config.load(path)
    assert config.resolve(setting, None, config.Config(), "dflt") == "dflt"
    assert config.resolve(setting, None, cfg, "dflt") == str(tmp_path / "etc" / "from-file")
    monkeypatch.setenv(env, "")  # empty: not set
    assert config.resolve(setting, None, cfg, "dflt") == str(tmp_path / "etc" / "from-file")
    monkeypatch.setenv(env, "from-env")
    assert config.resolve(setting, None, cfg, "dflt") == "from-env"
    assert config.resolve(setting, "from-flag", cfg, "dflt") == "from-flag"


def test_without_a_file_in_the_current_directory_nothing_is_set(tmp_path):
    assert config.load(cwd=tmp_path) == config.Config()


def test_severities_defaults_and_overrides(tmp_path):
    path = tmp_path / "groundwork.toml"
    path.write_text('[severity]\nGW2 = "off"\nGW4 = "error"\n', encoding="utf-8")
    codes = {"GW1", "GW2", "GW3", "GW4", "GW5"}
    assert config.severities(config.Config(), codes) == {"GW1": "error", "GW2": "error", "GW3": "error",
                                                         "GW4": "warn", "GW5": "error"}
    assert config.severities(config.load(path), codes) == {"GW1": "error", "GW2": "off", "GW3": "error",
                                                           "GW4": "error", "GW5": "error"}
    path.write_text('[severity]\nR1 = "off"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="R1 is a workbench rule, always an error"):
        config.severities(config.load(path), codes, {"R1"})


def test_a_config_file_that_is_a_fifo_or_a_folder_is_refused_at_once(tmp_path):
    """`--config FILE` naming a FIFO once waited forever for a writer; a folder is refused too."""
    import os
    import threading

    fifo = tmp_path / "groundwork.toml"
    os.mkfifo(fifo)
    raised = []

    def load_it():
        try:
            config.load(fifo)
        except ConfigError as exc:
            raised.append(str(exc))

    worker = threading.Thread(target=load_it, daemon=True)
    worker.start()
    worker.join(5)
    assert raised == [f"config file {fifo} is not a regular file (a FIFO)"]
    with pytest.raises(ConfigError, match=r"is not a regular file \(a folder\)"):
        config.load(tmp_path)
