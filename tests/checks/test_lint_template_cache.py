"""Compiled templates kept between processes (groundwork.core.templating.TemplateCache): an edited template
is never rendered from stale code, and a broken or unsafe cache is skipped, not an error."""

from __future__ import annotations

import os

from groundwork.core.templating import build_environment, template_cache


def _fresh(templates, cache_dir, **overlay):
    """A new environment over ``templates`` with the cache in ``cache_dir`` (as a new process
    would build it: nothing compiled in memory)."""
    env = build_environment(templates, template_cache(cache_dir))
    return env.overlay(**overlay) if overlay else env


def test_an_edited_template_is_compiled_again(tmp_path):
    templates, cache = tmp_path / "templates", tmp_path / "cache"
    templates.mkdir()
    (templates / "m.txt.j2").write_text("G9: {{ r.x }} first\n")
    assert _fresh(templates, cache).get_template("m.txt.j2").render(r={"x": 1}) == "G9: 1 first\n"
    assert list(cache.iterdir()), "the compiled template is kept"
    assert _fresh(templates, cache).get_template("m.txt.j2").render(r={"x": 2}) == "G9: 2 first\n"
    # Same length, same second: only the text differs.
    (templates / "m.txt.j2").write_text("G9: {{ r.x }} later\n")
    assert _fresh(templates, cache).get_template("m.txt.j2").render(r={"x": 3}) == "G9: 3 later\n"


def test_an_overlay_with_finalize_does_not_share_compiled_code(tmp_path):
    templates, cache = tmp_path / "templates", tmp_path / "cache"
    templates.mkdir()
    (templates / "p.txt.j2").write_text("{{ v }}")
    assert _fresh(templates, cache).get_template("p.txt.j2").render(v="a") == "a"
    wrapped = _fresh(templates, cache, finalize=lambda value: f"<{value}>")
    assert wrapped.get_template("p.txt.j2").render(v="a") == "<a>"
    assert _fresh(templates, cache).get_template("p.txt.j2").render(v="a") == "a"


def test_html_is_escaped_and_text_is_not_with_a_warm_cache(tmp_path):
    templates, cache = tmp_path / "templates", tmp_path / "cache"
    templates.mkdir()
    for name in ("x.html", "x.txt.j2"):
        (templates / name).write_text("{{ v }}")
    for _ in range(2):
        env = _fresh(templates, cache)
        assert env.get_template("x.html").render(v="<b>") == "&lt;b&gt;"
        assert env.get_template("x.txt.j2").render(v="<b>") == "<b>"


def test_a_damaged_cache_file_is_compiled_over(tmp_path):
    templates, cache = tmp_path / "templates", tmp_path / "cache"
    templates.mkdir()
    (templates / "m.txt.j2").write_text("{{ 1 + 1 }}")
    _fresh(templates, cache).get_template("m.txt.j2")
    for entry in cache.iterdir():
        entry.write_bytes(b"not a cache entry")
    assert _fresh(templates, cache).get_template("m.txt.j2").render() == "2"


def test_no_cache_when_switched_off_or_the_directory_is_unsafe(tmp_path, monkeypatch):
    monkeypatch.setenv("GROUNDWORK_TEMPLATE_CACHE", "off")
    assert template_cache() is None
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)  # others could plant code there
    assert template_cache(shared) is None
    blocked = tmp_path / "file"
    blocked.write_text("")
    assert template_cache(blocked) is None
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "m.txt.j2").write_text("ok")
    assert build_environment(templates, None).get_template("m.txt.j2").render() == "ok"


def test_no_cache_below_the_working_directory_without_a_home(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GROUNDWORK_TEMPLATE_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    monkeypatch.setattr(os.path, "expanduser", lambda path: path)  # no HOME, no passwd entry
    assert template_cache() is None
    assert list(tmp_path.iterdir()) == []
