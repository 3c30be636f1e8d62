"""groundwork: audit a workbench run archive in a DuckDB warehouse."""

__version__ = "0.1.0"
