"""How the runtime finds the process's OS: the selector under the `simgpu.os` entry point, else HostOS only."""

import importlib.metadata

import pytest

import runtime.os as rtos
import wiring.os_select


def test_the_installed_selector_is_the_wiring_layers():
    assert rtos._selector() is wiring.os_select.select_os


def test_without_a_selector_mockgpu_is_an_error_not_a_fallback(monkeypatch):
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda **kw: [])
    monkeypatch.setenv("MOCKGPU", "1")
    with pytest.raises(RuntimeError, match="no OS selector is installed"):
        rtos._selector()


def test_without_a_selector_the_runtime_offers_only_hostos(monkeypatch, tmp_path):
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda **kw: [])
    monkeypatch.delenv("MOCKGPU", raising=False)
    monkeypatch.setattr(rtos, "KFD_PATH", str(tmp_path / "kfd"))
    select = rtos._selector()
    with pytest.raises(RuntimeError, match="Set MOCKGPU=1"):
        select()
    (tmp_path / "kfd").touch()
    assert isinstance(select(), rtos.HostOS)


def test_the_selector_picks_mockos_only_when_asked(monkeypatch, tmp_path):
    monkeypatch.setattr(rtos, "KFD_PATH", str(tmp_path / "kfd"))
    monkeypatch.setenv("MOCKGPU", "0")
    monkeypatch.delenv("SIMGPU_TRACE", raising=False)
    with pytest.raises(RuntimeError, match="Set MOCKGPU=1"):
        wiring.os_select.select_os()
    monkeypatch.setenv("MOCKGPU", "1")
    assert type(wiring.os_select.select_os()).__name__ == "MockOS"
