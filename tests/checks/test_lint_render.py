"""Message and grounding.txt rendering: the bulk path and its fast repr filters are exact."""

from __future__ import annotations

import json

from groundwork.checks import messages
from groundwork.core.pyrepr import pyrepr, repr_json
from groundwork.core.templating import build_environment

VALUES = ["src:a", "it's", 'say "hi"', "both ' and \"", "back\\slash", "tab\there", "new\nline", "é", "\u202e",
          "\x00", "\U0001f600", "", None, True, 5, 2.0, ["a", 1], {"source_id": "S", "content_hash": None}]


def test_repr_filters_and_their_fast_paths_equal_python_repr():
    # CPython 3.11's own repr() is the workbench's (docs/rules.md#repr); the filters' fast paths for
    # printable ASCII and escape-free JSON strings must not change a single byte.
    for value in VALUES:
        assert repr_json(json.dumps(value)) == repr(value), value
        assert repr_json(json.dumps(value, ensure_ascii=False)) == repr(value), value
        assert pyrepr(value) == repr(value), value
    assert repr_json(None) == "None"


def test_bulk_rendering_equals_one_row_at_a_time_even_with_nul_in_a_value():
    rows = [{"found": n} for n in (0, 2, 3)]
    assert messages.render_many("messages/G0_roots.txt.j2", rows) == [
        f"G0: expected exactly one invoke_agent span, found {n}" for n in (0, 2, 3)]
    row = {"problem": "chat_before_retrieval", "span_id": "a\x00b"}  # span ids are printed verbatim
    assert messages.render_many("messages/G1.txt.j2", [row, row]) == [
        "G1: chat span a\x00b started before the first retrieval span ended"] * 2


def test_grounding_txt_texts():
    assert messages.grounding_text(True, "input_only", 0, 1, []) == "grounding: passed [input_only] (0 retrieval, 1 chat spans)\n"
    assert messages.grounding_text(False, None, 0, 0, ["G0: expected exactly one invoke_agent span, found 0"]) == \
        "grounding: FAILED [unknown mode]\n  - G0: expected exactly one invoke_agent span, found 0\n"
    assert messages.grounding_text(False, "none", 0, 1, ["a", "b"]) == "grounding: FAILED [none]\n  - a\n  - b\n"


def test_message_templates_render_alone_as_well():
    text = build_environment(messages.TEMPLATES_DIR).get_template("messages/G3.txt.j2").render(r={"source_id": "it's", "source_id_json": '"it\'s"', "content_hash": "b" * 64})
    assert text.rstrip("\n") == "G3: evidence \"it's\" hash bbbbbbbbbbbb\u2026 not in trace"


def test_string_source_ids_are_repr_d_from_their_json_so_lone_surrogates_survive():
    rows = [{"source_id": "s\ufffd", "source_id_json": '"s\\ud800"', "content_hash": "x"},   # VARCHAR lost the surrogate
            {"source_id": "7", "source_id_json": "7", "content_hash": "x"}]                 # str(7) is repr'd as a string
    assert messages.render_many("messages/G3.txt.j2", rows) == [
        "G3: evidence 's\\ud800' hash x\u2026 not in trace", "G3: evidence '7' hash x\u2026 not in trace"]
