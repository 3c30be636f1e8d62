"""groundwork's bottom layer: what every other layer shares, importing nothing of the project.

errors, paths (where the data files are), cachedir, native (the C fast-path switch), pyrepr
(Python's repr/str of parsed JSON values), jsontext (JSON text <-> values), canonical (content
hashes), warehouse (the DuckDB connection and schema).
"""
