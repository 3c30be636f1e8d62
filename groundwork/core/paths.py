"""Where the project's data files live (works from a checkout and from an install)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
SQL_DIR = ROOT / "sql"
RULES_DIR = SQL_DIR / "rules"
QUERIES_DIR = SQL_DIR / "queries"
SCHEMA_SQL = SQL_DIR / "schema.sql"
TEMPLATES_DIR = ROOT / "reports" / "templates"
