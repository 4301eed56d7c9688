from __future__ import annotations

import pytest

from codeseam.errors import ConfigError
from codeseam.settings import load_settings


def test_precedence_defaults_config_env_flags(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text('chunk_max_bytes = 1500\nk = 5\nscrub = false\n')
    env = {"RAG_CONFIG": str(cfg), "RAG_K": "7"}
    s = load_settings({"k": 3, "chunk_min_bytes": None}, env=env)
    assert s.chunk_max_bytes == 1500  # config beats default
    assert s.scrub is False
    assert s.k == 3  # flag beats env beats config
    assert s.chunk_min_bytes == 200  # None flag = not given
    assert load_settings(env=env).k == 7


@pytest.mark.parametrize("value,expected", [("on", True), ("off", False), ("1", True), ("0", False)])
def test_scrub_env_switch(tmp_path, value, expected):
    env = {"RAG_CONFIG": str(tmp_path / "none.toml"), "RAG_SCRUB": value}
    (tmp_path / "none.toml").write_text("")
    assert load_settings(env=env).scrub is expected


def test_bad_values_stop_with_clear_error(tmp_path):
    (tmp_path / "c.toml").write_text("")
    base = {"RAG_CONFIG": str(tmp_path / "c.toml")}
    with pytest.raises(ConfigError, match="RAG_CHUNK_MAX_BYTES"):
        load_settings(env={**base, "RAG_CHUNK_MAX_BYTES": "lots"})
    with pytest.raises(ConfigError, match="k must be"):
        load_settings({"k": 500}, env=base)
    bad = tmp_path / "bad.toml"
    bad.write_text("nonsense_key = 1\n")
    with pytest.raises(ConfigError, match="unknown key"):
        load_settings(env={"RAG_CONFIG": str(bad)})
    with pytest.raises(ConfigError, match="not found"):
        load_settings(env={"RAG_CONFIG": str(tmp_path / "missing.toml")})


def test_lite_vs_server_uri(tmp_path):
    (tmp_path / "c.toml").write_text("")
    env = {"RAG_CONFIG": str(tmp_path / "c.toml"), "RAG_DATA_DIR": str(tmp_path / "d")}
    s = load_settings(env=env)
    assert s.is_lite and s.resolved_milvus_uri == str(tmp_path / "d" / "index.db")
    s2 = load_settings({"milvus_uri": "http://milvus:19530"}, env=env)
    assert not s2.is_lite


def test_list_settings_split_on_commas_or_on_lines(tmp_path):
    (tmp_path / "c.toml").write_text('allowed_roots = ["/a,b", "/c"]\n')
    env = {"RAG_CONFIG": str(tmp_path / "c.toml")}
    assert load_settings(env=env).allowed_roots == ("/a,b", "/c")  # TOML lists are taken as they are
    env["RAG_SCRUB_ALLOW"] = "AKIA[0-9]{4}, example\\.com ,,"
    assert load_settings(env=env).scrub_allow == ("AKIA[0-9]{4}", "example\\.com")
    env["RAG_SCRUB_ALLOW"] = "AKIA[0-9]{4,8}\n\n  sk-test-[a-z]{2,} \n"  # lines: commas stay in the pattern
    assert load_settings(env=env).scrub_allow == ("AKIA[0-9]{4,8}", "sk-test-[a-z]{2,}")
    env["RAG_ALLOWED_ROOTS"] = "/srv/a,b\n/srv/c"
    assert load_settings(env=env).allowed_roots == ("/srv/a,b", "/srv/c")
