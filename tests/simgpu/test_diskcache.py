"""simgpu.diskcache: the checks every on-disk cache (the JIT's objects, the kernel cache, the interposer's builds)
makes before it uses an entry -- the directory and the file the user's own and not writable by others, the entry
signed with the user's secret under the key it is read for -- and the secret itself."""

from __future__ import annotations

import functools
import os
import subprocess
import sys

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simgpu import diskcache
from tests.support.cache_entries import damaged

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FUZZ = settings(max_examples=int(os.environ.get("SIMGPU_FUZZ_EXAMPLES", "200")), deadline=None)
FIELDS = {"object": bytes(range(256)) * 3, "name": "E_3", "proof_s": 0.25, "nothing": None}


@pytest.fixture(autouse=True)
def own_secret(tmp_path, monkeypatch):
    """Each test with a secret of its own (outside its cache directories)."""
    monkeypatch.setenv("SIMGPU_CACHE_KEY", str(tmp_path / "config" / "cache-key"))
    diskcache.forget_secret()
    yield
    diskcache.forget_secret()


def give_away(path) -> None:
    """Make `path` another user's (root only: nobody else may)."""
    if os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    os.chown(path, 65534, 65534, follow_symlinks=False)


def refusals(capfd) -> list[str]:
    return [line for line in capfd.readouterr().err.splitlines() if "refused" in line]


def test_an_entry_round_trips_carrying_its_key_and_stays_plain_msgpack(tmp_path):
    d = diskcache.directory(tmp_path / "cache", "kernels", "fp")
    assert d == tmp_path / "cache" / "kernels" / "fp" and (os.stat(d).st_mode & 0o777) == 0o700
    assert diskcache.store(d / "k1.msgpack", "k1", FIELDS)
    assert diskcache.load(d / "k1.msgpack", "k1") == FIELDS
    assert diskcache.load(d / "k1.msgpack", "k2") is None  # an entry is good only for the key it was stored under
    raw = msgpack.unpackb((d / "k1.msgpack").read_bytes())
    assert raw["key"] == "k1" and len(raw["hmac"]) == 32 and raw["object"] == FIELDS["object"]
    assert os.stat(d / "k1.msgpack").st_mode & 0o777 == 0o600 and os.listdir(d) == ["k1.msgpack"]  # no temporaries


def test_an_entry_signed_with_another_secret_is_not_believed(tmp_path, monkeypatch):
    """A perfectly formed entry someone made with a secret of theirs (a planted file) is treated as absent."""
    planted = diskcache.pack("k1", {**FIELDS, "object": b"planted"})
    monkeypatch.setenv("SIMGPU_CACHE_KEY", str(tmp_path / "mine" / "cache-key"))
    diskcache.forget_secret()
    assert diskcache.unpack("k1", planted) is None
    assert diskcache.unpack("k1", diskcache.pack("k1", FIELDS)) == FIELDS


@pytest.mark.parametrize("how", ["world-writable", "group-writable", "another user's", "a file"])
def test_a_refused_directory_warns_once_and_is_neither_read_nor_written(tmp_path, capfd, how):
    root = tmp_path / "cache"
    good = diskcache.directory(root, "kernels")
    assert diskcache.store(good / "k1.msgpack", "k1", FIELDS)
    target = root / "kernels"  # below a good root: every directory from the root down is checked
    if how == "world-writable":
        os.chmod(target, 0o777)
    elif how == "group-writable":
        os.chmod(target, 0o770)
    elif how == "another user's":
        give_away(target)
    else:
        (target / "k1.msgpack").unlink()
        target.rmdir()
        target.write_bytes(b"")
    assert diskcache.directory(root, "kernels") is None
    assert diskcache.directory(root, "kernels") is None
    lines = refusals(capfd)
    assert len(lines) == 1 and str(target) in lines[0] and lines[0].startswith("simgpu: cache directory")
    assert diskcache.directory(root) == root  # the root itself is fine


@pytest.mark.parametrize("how", ["world-writable", "group-writable", "another user's", "a symbolic link"])
def test_a_refused_entry_file_is_not_read_and_is_replaced_by_the_next_store(tmp_path, capfd, how):
    d = diskcache.directory(tmp_path / "cache")
    path = d / "k1.msgpack"
    assert diskcache.store(path, "k1", FIELDS)
    if how == "a symbolic link":
        os.replace(path, d / "elsewhere")
        path.symlink_to(d / "elsewhere")
    else:
        os.chmod(path, 0o666 if how == "world-writable" else 0o660 if how == "group-writable" else 0o600)
        if how == "another user's":
            give_away(path)
    assert diskcache.load(path, "k1") is None
    lines = refusals(capfd)
    assert len(lines) == 1 and str(path) in lines[0]
    assert diskcache.store(path, "k1", FIELDS)  # the caller compiles afresh and writes its own entry over it
    assert diskcache.load(path, "k1") == FIELDS and not path.is_symlink()


def test_the_secret_is_made_once_mode_0600_outside_the_cache_and_a_readable_one_is_refused(tmp_path, capfd):
    key = diskcache.secret()
    path = tmp_path / "config" / "cache-key"
    assert len(key) == 32 and path.read_bytes() == key
    assert os.stat(path).st_mode & 0o777 == 0o600 and os.stat(path.parent).st_mode & 0o777 == 0o700
    diskcache.forget_secret()
    assert diskcache.secret() == key  # read back, not made again
    os.chmod(path, 0o644)
    diskcache.forget_secret()
    assert diskcache.secret() is None
    assert diskcache.pack("k1", FIELDS) is None and diskcache.unpack("k1", b"\x80" * 64) is None
    d = diskcache.directory(tmp_path / "cache")
    assert not diskcache.store(d / "k1.msgpack", "k1", FIELDS) and not os.listdir(d)  # no disk cache without it
    lines = refusals(capfd)
    assert len(lines) == 1 and "cache key" in lines[0] and "0644" in lines[0]


@pytest.mark.parametrize("content", [b"", b"short", bytes(33)])
def test_a_secret_of_the_wrong_size_is_refused(tmp_path, capfd, content):
    path = tmp_path / "config" / "cache-key"
    path.parent.mkdir(mode=0o700)
    path.write_bytes(content)
    os.chmod(path, 0o600)
    assert diskcache.secret() is None
    assert len(refusals(capfd)) == 1


def test_processes_starting_together_agree_on_one_secret(tmp_path):
    env = dict(os.environ, SIMGPU_CACHE_KEY=str(tmp_path / "config" / "cache-key"), PYTHONPATH=ROOT)
    code = "from simgpu import diskcache; print(diskcache.secret().hex())"
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, env=env, text=True)
             for _ in range(4)]
    keys = {p.communicate(timeout=60)[0].strip() for p in procs}
    assert len(keys) == 1 and bytes.fromhex(keys.pop()) == (tmp_path / "config" / "cache-key").read_bytes()
    assert os.listdir(tmp_path / "config") == ["cache-key"]  # no temporaries left


@functools.cache
def _entries(secret: bytes):
    """An entry under k1 made with `secret` (the test's) and the strategy of its damaged forms, other keys' entries
    among them (k2's, k0's, one unsigned): made once."""
    good = diskcache.pack("k1", FIELDS)
    others = [diskcache.pack("k2", FIELDS), diskcache.pack("k0", {**FIELDS, "object": b"o"}),
              msgpack.packb({**FIELDS, "key": "k1"})]
    return good, damaged(good, others)


@FUZZ
@given(st_data=st.data())
def test_a_damaged_entry_is_never_believed(tmp_path_factory, st_data):
    """Random bytes, truncations, bit flips, bytes appended, other keys' entries: load and unpack never raise, and
    give the stored fields only for the very bytes stored."""
    d = diskcache.directory(tmp_path_factory.getbasetemp() / "diskcache-fuzz")
    good, strategy = _entries(diskcache.secret())
    what, data = st_data.draw(strategy)
    (d / "k1.msgpack").write_bytes(data)
    want = FIELDS if data == good else None
    assert diskcache.unpack("k1", data) == want, what
    assert diskcache.load(d / "k1.msgpack", "k1") == want, what
