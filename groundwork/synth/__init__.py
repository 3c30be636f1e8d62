"""Synthetic fleet generator: archives in the workbench's exact format, with ground truth.

`generate(out, runs, seed, violation_rate)` writes OUT/runs (the archive), OUT/sources.yaml with
pinned snapshot copies, and OUT/truth.jsonl: per run folder, the scenario and the verdicts it
must get, known by construction (build.py, scenarios.py), never by running a linter.
"""

from groundwork.synth.archive import SynthResult, generate, plan

__all__ = ["SynthResult", "generate", "plan"]
