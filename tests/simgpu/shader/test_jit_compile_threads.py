"""LLVM compiles on several threads at once: each in its own LLVMContext and target machines, without the JIT's
module lock (llvmlite still serialises its calls into LLVM: tier.py keeps the LLVM thread at the process's
priority for that reason)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from simgpu.shader.jit import compile as jc

pytest.importorskip("llvmlite")


def _ir(k: int) -> str:
    """A small module whose code differs with k (a loop, so the passes have work)."""
    return f"""
define i64 @round(i64 %n) {{
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
  %acc = phi i64 [{k}, %entry], [%acc1, %loop]
  %m = mul i64 %acc, {2 * k + 1}
  %acc1 = xor i64 %m, %i
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, %n
  br i1 %done, label %exit, label %loop
exit:
  ret i64 %acc1
}}
"""


@pytest.fixture
def no_disk_cache(monkeypatch):
    monkeypatch.setenv("SIMGPU_JIT_CACHE", "off")


def test_a_compile_does_not_wait_for_the_module_lock(no_disk_cache):
    jc.prepare()
    done = threading.Event()
    with jc._LOCK:  # held, as by another thread's long step
        t = threading.Thread(target=lambda: (jc.object_code(_ir(3)), done.set()))
        t.start()
        assert done.wait(60), "the compile waited for the lock"
    t.join()


def test_compiles_on_many_threads_give_the_bytes_of_one_thread(no_disk_cache):
    alone = {k: jc.object_code(_ir(k))[0] for k in range(4)}
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda k: (k, jc.object_code(_ir(k))[0]), [0, 1, 2, 3] * 4))
    assert all(obj == alone[k] for k, obj in together)
