"""read_text and file_signature: the decoding policy, hashing, and files that change under us.

Oracles: each decoding case starts from a known string and the bytes some encoder made of
it, so the decoded text must be that string; the hash must be sha256 of the bytes on disk.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codeseam.discover import decode_bytes, discover, file_signature, read_text
from codeseam.errors import FileSkipped

SAMPLE = "def grüße():\n    return 'café – naïve'\n"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


def reason_of(path, **kw) -> str:
    with pytest.raises(FileSkipped) as err:
        read_text(path, **kw)
    return err.value.reason


@pytest.mark.parametrize("raw, expected", [
    (SAMPLE.encode("utf-8"), SAMPLE),
    (codecs.BOM_UTF8 + SAMPLE.encode("utf-8"), SAMPLE),  # the BOM is not text
    (SAMPLE.encode("utf-16"), SAMPLE),  # BOM + native order
    (codecs.BOM_UTF16_BE + SAMPLE.encode("utf-16-be"), SAMPLE),
    (codecs.BOM_UTF16_LE + SAMPLE.encode("utf-16-le"), SAMPLE),
    (codecs.BOM_UTF32_LE + SAMPLE.encode("utf-32-le"), SAMPLE),
    (codecs.BOM_UTF32_BE + SAMPLE.encode("utf-32-be"), SAMPLE),
    # a coding cookie on line 1, or on line 2 after a shebang
    (b"# -*- coding: latin-1 -*-\n" + "s = 'café'\n".encode("latin-1"), "# -*- coding: latin-1 -*-\ns = 'café'\n"),
    (b"#!/usr/bin/env python\n# vim: set fileencoding=iso-8859-15 :\n" + "e = '€'\n".encode("iso-8859-15"),
     "#!/usr/bin/env python\n# vim: set fileencoding=iso-8859-15 :\ne = '€'\n"),
    (b"# coding: cp1251\n" + "x = 'привет'\n".encode("cp1251"), "# coding: cp1251\nx = 'привет'\n"),
    # no cookie: cp1252 (a superset of Latin-1's printable range), latin-1 for its holes
    ("naïve déjà vu – “quoted”\n".encode("cp1252"), "naïve déjà vu – “quoted”\n"),
    (b"caf\xe9 \x81\x8d\n", "café \x81\x8d\n"),
    # a cookie that lies or names no text codec falls through to cp1252
    (b"# coding: utf-8\ns = '\xe9'\n", "# coding: utf-8\ns = 'é'\n"),
    (b"# coding: rot13\ns = '\xe9'\n", "# coding: rot13\ns = 'é'\n"),
    (b"# coding: no-such-codec\ns = '\xe9'\n", "# coding: no-such-codec\ns = 'é'\n"),
    # line ends and form feeds are kept exactly
    (b"a = 1\r\nb = 2\r\n", "a = 1\r\nb = 2\r\n"),
    (b"def a():\n    pass\n\x0c\ndef b():\n    pass\n", "def a():\n    pass\n\x0c\ndef b():\n    pass\n"),
    (b"", ""),
])
def test_decoding_policy(tmp_path, raw, expected):
    path = tmp_path / "f.py"
    path.write_bytes(raw)
    text, digest = read_text(path)
    assert text == expected
    assert digest == sha(raw)
    assert text.count("\n") == expected.count("\n")  # line numbers count "\n" only


def test_invalid_utf8_never_fails(tmp_path):
    raw = b"# ok\ns = '\xff\xfe\xc3\x28 \xe2\x82'\n"
    (tmp_path / "bad.py").write_bytes(raw)
    text, _ = read_text(tmp_path / "bad.py")
    assert text == raw.decode("cp1252")  # every byte here is defined in cp1252
    assert text.splitlines()[0] == "# ok"


def test_nul_means_binary_anywhere_but_utf16_is_text(tmp_path):
    (tmp_path / "late.txt").write_bytes(b"x\n" * 10_000 + b"\x00")
    assert reason_of(tmp_path / "late.txt") == "binary"
    (tmp_path / "u16.txt").write_bytes("ascii in UTF-16\n".encode("utf-16"))
    assert read_text(tmp_path / "u16.txt")[0] == "ascii in UTF-16\n"
    (tmp_path / "u16nul.txt").write_bytes("a\0b".encode("utf-16"))
    assert reason_of(tmp_path / "u16nul.txt") == "binary"


def test_size_limit(tmp_path):
    (tmp_path / "f.txt").write_bytes(b"x" * 2048)
    assert reason_of(tmp_path / "f.txt", max_file_bytes=1024) == "too-large"
    assert read_text(tmp_path / "f.txt", max_file_bytes=2048)[0] == "x" * 2048
    assert read_text(tmp_path / "f.txt")[0] == "x" * 2048  # None: no limit


def test_not_regular_files(tmp_path):
    (tmp_path / "dir").mkdir()
    assert reason_of(tmp_path / "dir") == "not-a-file"
    os.mkfifo(tmp_path / "fifo")
    result: list[str] = []
    reader = threading.Thread(target=lambda: result.append(reason_of(tmp_path / "fifo")), daemon=True)
    reader.start()
    reader.join(timeout=10)
    assert result == ["not-a-file"]  # answered at once, never blocked on the FIFO
    (tmp_path / "real.py").write_text("x\n")
    os.symlink("real.py", tmp_path / "link.py")
    # the final component must not be a symlink: discover() hands out resolved paths
    assert reason_of(tmp_path / "link.py") == "not-a-file"
    assert reason_of(tmp_path / "missing.py") == "vanished"
    assert reason_of(tmp_path / "real.py" / "sub") == "vanished"


def test_deleted_and_changed_between_listing_and_reading(tmp_path):
    (tmp_path / "gone.py").write_text("GONE = 1\n")
    (tmp_path / "changed.py").write_text("OLD = 1\n")
    (tmp_path / "same.py").write_text("SAME = 1\n")
    d = discover(tmp_path)
    by_path = {f.path: f for f in d.files}
    assert set(by_path) == {"gone.py", "changed.py", "same.py"}

    (tmp_path / "gone.py").unlink()
    new = b"NEW = 2  # longer than before\n"
    (tmp_path / "changed.py").write_bytes(new)

    assert reason_of(by_path["gone.py"].abs_path) == "vanished"
    text, digest = read_text(by_path["changed.py"].abs_path)
    assert (text, digest) == (new.decode(), sha(new))  # consistently the new state
    assert file_signature(by_path["changed.py"].abs_path)[0] == len(new)
    listed = by_path["same.py"]
    assert file_signature(listed.abs_path) == (listed.size, listed.mtime_ns)


def test_grew_past_the_limit_after_listing(tmp_path):
    (tmp_path / "grows.log.txt").write_text("small\n")
    f = discover(tmp_path, max_file_bytes=100).files[0]
    (tmp_path / "grows.log.txt").write_text("x\n" * 100)
    assert reason_of(f.abs_path, max_file_bytes=100) == "too-large"


def test_file_signature(tmp_path):
    (tmp_path / "a.py").write_text("a\n")
    st_ = os.stat(tmp_path / "a.py")
    assert file_signature(tmp_path / "a.py") == (st_.st_size, st_.st_mtime_ns)
    with pytest.raises(FileSkipped) as err:
        file_signature(tmp_path / "nope.py")
    assert err.value.reason == "vanished"


_NO_BOM = st.binary(max_size=600).filter(
    lambda b: not b.startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)))


@settings(max_examples=300, deadline=None)
@given(_NO_BOM)
def test_decode_never_fails_and_keeps_lines(raw):
    text, codec = decode_bytes(raw)
    text.encode("utf-8")  # always storable: no lone surrogates
    if codec in ("utf-8", "cp1252", "latin-1"):
        assert text.count("\n") == raw.count(b"\n")
        assert ("\0" in text) == (b"\0" in raw)
    try:
        assert text == raw.decode("utf-8")
    except UnicodeDecodeError:
        assert codec != "utf-8"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=300), st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-32"]))
def test_read_text_round_trips_unicode_with_bom(tmp_path, text, encoding):
    text = text.replace("\0", "")
    if encoding == "utf-8" and text.startswith("\ufeff"):
        text = "x" + text  # a leading U+FEFF in plain UTF-8 is a BOM, not text
    try:
        raw = text.encode(encoding)
    except UnicodeEncodeError:  # lone surrogates cannot be encoded
        return
    (tmp_path / "rt.txt").write_bytes(raw)
    assert read_text(tmp_path / "rt.txt") == (text, sha(raw))
