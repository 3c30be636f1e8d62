"""Errors that end a command with a one-line message and exit code 2."""


class GroundworkError(Exception):
    """The job could not be done; the message is shown to the user as one line."""


class WarehouseLocked(GroundworkError):
    """Another process holds the warehouse file open for writing."""


class ConfigError(GroundworkError):
    """A configuration file (e.g. sources.yaml) is unusable."""
