"""The run generators behind the property tests reach what they claim to: passing runs of all
four modes, a violation of every rule of docs/rules.md#rules (and both G1 and G2 forms), the step-1 and
step-3 stops, unlintable runs, and source-check outcomes of every kind. Judged by the reference,
so a generator regression cannot silently hollow out the property tests."""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from property_support import reference_lint, reference_verify
from reference import sources as refsrc
from strategies import archives, write_sources

RULES = ["G0", "E1", "G1", "G2", "G3", "G4", "R1", "R2", "R3", "N1", "D1", "D2", "D3"]
FORMS = ["G0: expected exactly one", "G0: envelope declares no valid", "G0: span", "G0: payload",
         "G0: malformed", "G0: grounded_on is not a list", "G1: a chat span exists", "G1: chat span",
         "G2: a succeeded", "G2: payload rests on"]


def test_generated_archives_cover_every_rule_and_mode():
    seen: Counter = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        copies = refsrc.load_sources(write_sources(Path(tmp), str_refs=True))

        @settings(max_examples=200, derandomize=True, database=None, deadline=None,
                  suppress_health_check=list(HealthCheck))
        @given(archives(max_runs=8))
        def collect(runs):
            for run in runs:
                lint = reference_lint(run)
                seen[f"lint:{lint.status}"] += 1
                if lint.status == "passed":
                    seen[f"passed:{lint.mode}"] += 1
                for v in lint.violations:
                    seen[v[:2]] += 1
                    for form in FORMS:
                        seen[form] += v.startswith(form)
                check = reference_verify(run, copies)
                seen[f"verify:{check.status}"] += 1
                seen["verified"] += bool(check.verified)
                seen["unresolved"] += bool(check.unresolved)
                for v in check.violations:
                    seen[v[:2]] += 1

        collect()
    missing = [key for key in RULES + ["S1", "S2", "lint:passed", "lint:failed", "lint:unlintable",
                                       "passed:retrieval", "passed:input_only", "passed:none", "passed:delegation",
                                       *FORMS,
                                       "verify:passed", "verify:failed", "verify:unverifiable", "verified", "unresolved"]
               if not seen[key]]
    assert not missing, f"generators never produced: {missing}; saw {dict(seen)}"
