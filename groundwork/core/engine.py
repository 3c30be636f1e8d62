"""DuckDB as groundwork imports it: the engine alone, the duckdb package where it is needed.

``duckdb`` here is DuckDB's engine, the C++ extension module ``_duckdb`` that the duckdb
package wraps and re-exports: ``connect``, connections and their ``execute`` / ``fetchall``
with bound parameters, and every DuckDB exception class (the same objects as
``duckdb.connect``, ``duckdb.Error``, ...). Importing the package costs a process ~0.1 s more
than the engine (its relational API in Python, its Arrow sources, importlib.metadata for its
version): a third of a drop-in call (`groundwork lint SPANS ENVELOPE`), which needs none of it.

What hands DuckDB Arrow data, or uses the relational API (``con.sql``, ``con.table``,
``.to_arrow_table()``), needs the package imported first: the engine refuses to scan an Arrow
table until the package has set up its Arrow sources. ``arrow()`` gives pyarrow with the
package imported, ``full()`` the package; each imports on its first call and costs nothing
after. (A DuckDB whose package has no separate engine module is used as the package.)
"""

from __future__ import annotations

try:
    import _duckdb as duckdb
except ImportError:  # pragma: no cover - DuckDB builds without the split
    import duckdb

__all__ = ["arrow", "duckdb", "full"]


def full():
    """The duckdb package (imported on the first call): the relational API, and Arrow scans."""
    import duckdb as package

    return package


def arrow():
    """pyarrow, for a table DuckDB will scan: the duckdb package is imported with it."""
    full()
    import pyarrow

    return pyarrow
