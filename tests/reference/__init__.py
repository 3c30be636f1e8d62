"""Independent reference implementations of the workbench's grounding linter and source check.

Written from the description of the workbench's behaviour alone (now docs/rules.md: the
contract, the linter and the source check), in plain Python, importing nothing from groundwork: the property tests hold the SQL implementation
to these, and tests/property/test_reference_corpus.py holds these to the workbench's own verdicts.
"""
