from __future__ import annotations

import subprocess
import sys
from dataclasses import fields

import pytest

from codeseam.errors import ConfigError
from codeseam.settings import Settings, load_settings


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


def hostile_settings(tmp_path) -> Settings:
    """Every setting away from its default, with the values that travel worst: list items
    holding commas, spaces at their ends and line breaks, strings holding commas and quotes, a
    float that is not a short decimal."""
    s = Settings(
        data_dir=str(tmp_path / "data, with a comma"), milvus_uri=str(tmp_path / "my,index.db"),
        milvus_token="tok,en", collection="code_seam", max_file_bytes=12345, chunker="window",
        chunk_max_bytes=1500, chunk_min_bytes=150, scrub=False,
        scrub_allow=("AKIA[0-9]{4,8}", " spaced ", "a\nb", "x{1,2},y"),
        embedding_backend="fake", embedding_model="some,model", embedding_base_url="http://h:1/v1",
        embedding_api_key="key,with,commas", embedding_batch=7, embedding_dim=48, embedding_threads=3,
        embedding_timeout=0.1 + 0.2, embedding_precision="int8", k=9, fusion="weighted", rrf_k=61,
        dense_weight=1 / 3, weak_threshold=0.25, freshness="check", freshness_budget=1.5,
        llm_base_url="http://llm:2/v1", llm_model="qwen,7b", llm_api_key="sk-,x", llm_timeout=12.5, llm_deadline=0.1 + 0.7,
        llm_max_reply_bytes=65537, enrich=True,
        enrich_language="de", enrich_concurrency=3, allowed_roots=(str(tmp_path / "a,b"), "/srv/c "),
        server_token="t0ken,", editor_url="idea://open?file={path}&line={line}", keepalive=12.5)
    unchanged = [f.name for f in fields(Settings) if getattr(s, f.name) == f.default]
    assert not unchanged, f"give these settings a non-default value here: {unchanged}"
    return s


def test_every_setting_reaches_a_child_process_whole(tmp_path):
    """The keep-alive server gets its settings from the CLI that starts it (server_env): every
    one arrives as it was, list items with commas included, and so does the fingerprint that
    decides whether the server is reused."""
    from codeseam.owner import keepalive

    s = hostile_settings(tmp_path)
    env = keepalive.server_env(s)
    assert load_settings(env=env) == s
    assert not any(k.startswith("RAG_") for k in env)  # the JSON stands for the config file and RAG_*
    assert load_settings({"k": 3}, env={**env, "RAG_K": "4"}).k == 3  # flags still apply on top
    with pytest.raises(ConfigError, match="CODESEAM_SETTINGS"):
        load_settings(env={"CODESEAM_SETTINGS": '{"no_such_setting": 1}'})
    probe = ("from codeseam.settings import load_settings\nfrom codeseam.owner.keepalive import fingerprint\n"
             "print(fingerprint(load_settings()))")
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == keepalive.fingerprint(s)
