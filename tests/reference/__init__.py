"""Independent reference implementations of the workbench's grounding linter and source check.

Written from the spec (/work/shared/spec/workbench-runs.md sections 2, 4, 5, 6, 10) alone, in
plain Python, importing nothing from groundwork: the property tests hold the SQL implementation
to these, and tests/property/test_reference_corpus.py holds these to the workbench's own verdicts.
"""
