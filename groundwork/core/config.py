"""groundwork.toml and the GROUNDWORK_* environment: where the warehouse, the sources and the
reports are, and the severity of each groundwork finding code, so a user need not repeat
``--warehouse`` on every command.

Each setting is resolved by one rule (``resolve``): the command-line flag, else the environment
variable, else the file, else the default. The file is ``--config FILE`` when given (it must
exist), else ``groundwork.toml`` in the current directory when there is one. Relative paths in
the file are relative to the file's folder. An unknown key, a value of the wrong type or an
unknown severity is a one-line ConfigError (exit 2).

    warehouse = "var/warehouse.duckdb"     # every command's --warehouse / -w
    sources = "workbench/sources.yaml"     # verify, drift, nightly, watch: --sources
    reports = "var/reports"                # nightly: --out

    [severity]                             # groundwork finding codes (docs/rules.md#severities)
    GW4 = "error"
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from groundwork.core.errors import ConfigError
from groundwork.core.regular import NotRegularFile, open_regular_file

FILE_NAME = "groundwork.toml"

# setting -> its environment variable
SETTINGS = {
    "warehouse": "GROUNDWORK_WAREHOUSE",
    "sources": "GROUNDWORK_SOURCES",
    "reports": "GROUNDWORK_REPORTS",
}
PATH_SETTINGS = ("warehouse", "sources", "reports")

SEVERITIES = ("error", "warn", "off")
# The default severity of each groundwork finding code (docs/rules.md#severities says why);
# a finding code not listed here is an error.
DEFAULT_SEVERITY = {
    "GW1": "error",   # span-id cycle: the run is unlintable anyway
    "GW2": "error",   # duplicate span id: the workbench counted a subtree twice; its verdict may be wrong
    "GW3": "error",   # delegation content_hash mismatch: the child envelope is not the one judged
    "GW4": "warn",    # delegated child missing: often an archive copied in part, or a child still landing
}


@dataclass(frozen=True)
class Config:
    """The settings of one groundwork.toml (empty without one)."""

    path: Path | None = None
    values: dict = field(default_factory=dict)
    severity: dict = field(default_factory=dict)


def _fail(path: Path, why: str) -> ConfigError:
    return ConfigError(f"{path}: {why}")


def load(path: str | os.PathLike | None = None, *, cwd: str | os.PathLike | None = None) -> Config:
    """The configuration file ``path`` (must exist), else ``groundwork.toml`` in ``cwd``
    (default: the current directory) if there is one."""
    explicit = path is not None
    path = Path(path) if explicit else Path(cwd or ".") / FILE_NAME
    if not explicit and not path.is_file():
        return Config()
    try:
        with open_regular_file(path) as f:   # a FIFO or device is refused, never waited on
            doc = tomllib.load(f)
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except NotRegularFile as exc:
        raise ConfigError(f"config file {path} is {exc.strerror}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise _fail(path, f"not valid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise _fail(path, "not UTF-8 text") from None
    values, severity = {}, {}
    for key, value in doc.items():
        if key == "severity":
            if not isinstance(value, dict):
                raise _fail(path, "severity must be a table: [severity] then lines like GW2 = \"warn\"")
            for code, level in value.items():
                if level not in SEVERITIES:
                    raise _fail(path, f"severity.{code} = {level!r}: must be one of {', '.join(SEVERITIES)}")
                severity[code] = level
        elif key in SETTINGS:
            if not isinstance(value, str) or not value:
                raise _fail(path, f"{key} must be a non-empty string (a path)")
            values[key] = str(path.parent / value) if key in PATH_SETTINGS else value
        else:
            raise _fail(path, f"unknown key {key!r} (known: {', '.join([*SETTINGS, 'severity'])})")
    return Config(path=path, values=values, severity=severity)


def resolve(name: str, flag, config: Config, default=None):
    """Setting ``name``: the flag (when given), else its environment variable (when set and not
    empty), else the file's value, else ``default``."""
    if flag is not None:
        return flag
    env = SETTINGS.get(name)
    if env and os.environ.get(env):
        return os.environ[env]
    if name in config.values:
        return config.values[name]
    return default


def severities(config: Config, finding_codes, rule_codes=()) -> dict[str, str]:
    """The severity of every finding code in ``finding_codes``: the file's, else the default.
    A code of the file that is not a finding code is a ConfigError: a workbench rule code (in
    ``rule_codes``) is always an error, since its violations fail the run's verdict."""
    finding_codes, rule_codes = set(finding_codes), set(rule_codes)
    for code in config.severity:
        if code in rule_codes:
            raise _fail(config.path, f"severity.{code}: {code} is a workbench rule, always an error "
                                     "(its violations fail the run); only groundwork findings (GW...) have a severity")
        if code not in finding_codes:
            raise _fail(config.path, f"severity.{code}: no such finding code (known: {', '.join(sorted(finding_codes))})")
    return {code: config.severity.get(code, DEFAULT_SEVERITY.get(code, "error")) for code in sorted(finding_codes)}
