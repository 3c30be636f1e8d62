"""The run generators behind the property tests reach what they claim to: passing runs of all
four modes, a violation of every rule of docs/rules.md#rules (and both G1 and G2 forms), the step-1 and
step-3 stops, unlintable runs, and source-check outcomes of every kind; and, for each envelope
value the linter crashes on only where it reads it (docs/rules.md#early-stops: an outcome, the
evidence, the delegations), runs stopped at step 1 and at step 3 over it, runs that crash on it
past step 3, and (delegations) runs of another mode that never read it. Judged by the reference,
so a generator regression cannot silently hollow out the property tests."""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

import json

from hypothesis import HealthCheck, given, settings

from property_support import reference_lint, reference_verify
from reference import sources as refsrc
from strategies import archives, write_sources

PARTS = ("outcome", "evidence", "delegations")
EARLY = [f"{stop}-over-{part}" for stop in ("step1", "step3", "crash") for part in PARTS] + ["unread-delegations"]


def bad_parts(run) -> list[str]:
    """The envelope values of ``run`` the linter cannot read (docs/rules.md#early-stops)."""
    try:
        env = json.loads(run.files["envelope.json"].decode("utf-8"))
    except (ValueError, UnicodeDecodeError, KeyError, AttributeError):
        return []
    if not isinstance(env, dict):
        return []
    outcome, evidence, dels = env.get("outcome"), env.get("evidence"), env.get("delegations")
    found = {"outcome": bool(outcome) and not isinstance(outcome, dict),
             "evidence": bool(evidence) and (not isinstance(evidence, list)
                                             or any(not isinstance(e, dict) for e in evidence)),
             "delegations": bool(dels) and not isinstance(dels, (list, str, dict))}
    return [part for part in PARTS if found[part]]


def early_stop_forms(run, lint) -> list[str]:
    """What a run with unreadable envelope values shows of docs/rules.md#early-stops."""
    out = []
    first = lint.violations[0] if lint.violations else ""
    for part in bad_parts(run):
        if first.startswith("G0: expected exactly one"):
            out.append(f"step1-over-{part}")
        elif first.startswith("G0: envelope declares no valid"):
            out.append(f"step3-over-{part}")
        elif lint.status == "unlintable":
            out.append(f"crash-over-{part}")
        elif part == "delegations":
            out.append("unread-delegations")
    return out


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

        @settings(max_examples=60, derandomize=True, database=None, deadline=None,
                  suppress_health_check=list(HealthCheck))
        @given(archives(max_runs=8, early_stops=True))
        def collect_early_stops(runs):
            for run in runs:
                lint = reference_lint(run)
                for form in early_stop_forms(run, lint):
                    seen[form] += 1
                seen[f"early-verify:{reference_verify(run, copies).status}"] += 1

        collect_early_stops()
    missing = [key for key in RULES + ["S1", "S2", "lint:passed", "lint:failed", "lint:unlintable",
                                       "passed:retrieval", "passed:input_only", "passed:none", "passed:delegation",
                                       *FORMS, *EARLY, "early-verify:unverifiable", "early-verify:passed",
                                       "verify:passed", "verify:failed", "verify:unverifiable", "verified", "unresolved"]
               if not seen[key]]
    assert not missing, f"generators never produced: {missing}; saw {dict(seen)}"
