"""Token stores: keyed by issuer and resource; the file store's permissions and atomic writes."""

from __future__ import annotations

import asyncio
import os
import stat

import pytest

from wiremcp.auth import FileTokenStore, MemoryTokenStore
from wiremcp.auth._storage import default_state_dir

ENTRY = {"tokens": {"access_token": "t", "token_type": "Bearer"}, "client": {"client_id": "c", "issuer": "https://as"}}


def test_memory_store_round_trip_and_keys():
    async def go():
        store = MemoryTokenStore()
        await store.save("https://as", "https://rs/mcp", ENTRY)
        assert await store.load("https://as", "https://rs/mcp") == ENTRY
        assert await store.load("https://other-as", "https://rs/mcp") is None
        assert await store.load("https://as", "https://rs/other") is None
        await store.delete("https://as", "https://rs/mcp")
        await store.delete("https://as", "https://rs/mcp")
        assert await store.load("https://as", "https://rs/mcp") is None

    asyncio.run(go())


def test_file_store_permissions_and_round_trip(tmp_path):
    directory = tmp_path / "state" / "oauth"

    async def go():
        store = FileTokenStore(directory)
        await store.save("https://as", "https://rs/mcp", ENTRY)
        path = store.path_for("https://as", "https://rs/mcp")
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700
        assert "https" not in path.name  # the file name does not reveal the servers
        assert await FileTokenStore(directory).load("https://as", "https://rs/mcp") == ENTRY
        assert await store.load("https://as2", "https://rs/mcp") is None
        await store.save("https://as", "https://rs/mcp", {"tokens": {"access_token": "new"}})
        assert await store.load("https://as", "https://rs/mcp") == {"tokens": {"access_token": "new"}}
        assert sorted(p.name for p in directory.iterdir()) == [path.name]  # no temporary file left
        await store.delete("https://as", "https://rs/mcp")
        assert await store.load("https://as", "https://rs/mcp") is None

    asyncio.run(go())


def test_file_store_tightens_an_existing_directory_and_ignores_garbage(tmp_path):
    directory = tmp_path / "oauth"
    directory.mkdir(mode=0o755)

    async def go():
        store = FileTokenStore(directory)
        await store.save("https://as", "https://rs", ENTRY)
        assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700
        store.path_for("https://as", "https://rs").write_text("{not json")
        assert await store.load("https://as", "https://rs") is None

    asyncio.run(go())


def test_default_state_dir_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert default_state_dir() == tmp_path / "wiremcp" / "oauth"
    monkeypatch.delenv("XDG_STATE_HOME")
    assert str(default_state_dir()).endswith(os.path.join(".local", "state", "wiremcp", "oauth"))


def test_keys_and_forgetting_a_server(tmp_path):
    """What ``wiremcp logout URL`` does: the entries whose resource is the URL or a parent path of it."""
    from wiremcp.cli._login import forget

    async def go(store):
        await store.save("https://as", "https://rs/mcp", ENTRY)
        await store.save("https://as", "https://rs", ENTRY)  # the whole host is the resource
        await store.save("https://as", "https://rs/other", ENTRY)
        await store.save("https://as", "https://rs2/mcp", ENTRY)
        assert len(await store.keys()) == 4
        gone = await forget(store, "https://rs/mcp")
        assert sorted(gone) == [("https://as", "https://rs"), ("https://as", "https://rs/mcp")]
        assert sorted(await store.keys()) == [("https://as", "https://rs/other"), ("https://as", "https://rs2/mcp")]
        assert await forget(store, "https://rs/mcp") == []

    asyncio.run(go(MemoryTokenStore()))
    directory = tmp_path / "oauth"
    asyncio.run(go(FileTokenStore(directory)))
    (directory / "stray.json").write_text('{"issuer": "https://as", "resource": "https://rs/other"}')  # not named by its key
    (directory / "junk.json").write_text("[1, 2")
    assert sorted(asyncio.run(FileTokenStore(directory).keys())) == [("https://as", "https://rs/other"), ("https://as", "https://rs2/mcp")]


def _keyring_backend(tmp_path):
    pytest.importorskip("keyring", reason="keyring is optional (pip install keyring); the test extra installs it")
    file_backends = pytest.importorskip("keyrings.alt.file", reason="keyrings.alt gives keyring a headless backend")
    backend = file_backends.PlaintextKeyring()
    backend.file_path = str(tmp_path / "keyring.cfg")
    return backend


def test_keyring_store_round_trip_and_keys(tmp_path):
    from wiremcp.auth import KeyringTokenStore

    backend = _keyring_backend(tmp_path)

    async def go():
        store = KeyringTokenStore(backend=backend)
        assert await store.load("https://as", "https://rs/mcp") is None
        await store.save("https://as", "https://rs/mcp", ENTRY)
        await store.save("https://as", "https://rs/mcp", ENTRY)  # listed once
        assert await store.load("https://as", "https://rs/mcp") == ENTRY
        assert await store.load("https://as2", "https://rs/mcp") is None
        assert await KeyringTokenStore(backend=backend).keys() == [("https://as", "https://rs/mcp")]
        # the secret's name does not reveal the servers
        assert backend.get_password("wiremcp-oauth", "https://as") is None
        await store.delete("https://as", "https://rs/mcp")
        await store.delete("https://as", "https://rs/mcp")
        assert await store.load("https://as", "https://rs/mcp") is None
        assert await store.keys() == []

    asyncio.run(go())


def test_keyring_store_is_forgotten_like_the_others(tmp_path):
    from wiremcp.auth import KeyringTokenStore
    from wiremcp.cli._login import forget

    store = KeyringTokenStore(service="wiremcp-test", backend=_keyring_backend(tmp_path))

    async def go():
        await store.save("https://as", "https://rs/mcp", ENTRY)
        await store.save("https://as", "https://rs/other", ENTRY)
        assert await forget(store, "https://rs/mcp") == [("https://as", "https://rs/mcp")]
        assert await store.keys() == [("https://as", "https://rs/other")]

    asyncio.run(go())


def test_keyring_store_refuses_a_machine_without_a_keyring():
    pytest.importorskip("keyring", reason="keyring is optional (pip install keyring); the test extra installs it")
    from keyring.backends.fail import Keyring as NoKeyring

    from wiremcp.auth import KeyringTokenStore

    with pytest.raises(RuntimeError, match="no usable backend"):
        KeyringTokenStore(backend=NoKeyring())
