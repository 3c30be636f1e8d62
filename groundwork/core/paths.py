"""Where the project's data files live (works from a checkout and from an install).

The top-level folders sql/ and reports/ are installed as groundwork.sql and groundwork.reports
(pyproject.toml's package-dir): once installed they sit inside the package folder; in a checkout,
or an editable install, they are the checkout's own top-level folders.
"""

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent   # groundwork/
ROOT = PACKAGE.parent                                # the checkout: docs/, examples/ (where there is one)


def _installed(name: str) -> Path:
    inside = PACKAGE / name
    return inside if inside.is_dir() else ROOT / name


SQL_DIR = _installed("sql")
RULES_DIR = SQL_DIR / "rules"
QUERIES_DIR = SQL_DIR / "queries"
SCHEMA_DIR = SQL_DIR / "schema"            # the warehouse schema: its files, applied in file name order
DERIVED_DIR = SCHEMA_DIR / "30_derived"   # the derived relations the rule files read, one file each
CHECK_TEMPLATES_DIR = PACKAGE / "checks" / "templates"  # the checks' message, grounding.txt and sources.txt templates
