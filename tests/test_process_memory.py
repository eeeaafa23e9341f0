"""The daemon's allocator settings (issue 20: resident memory at 100,000 episodes)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from fleetmem import process_memory


def test_an_arena_cap_below_one_is_refused_naming_the_value() -> None:
    with pytest.raises(ValueError, match="arenas must be >= 1, got 0"):
        process_memory.limit_arenas(0)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator only")
def test_on_glibc_the_cap_is_taken_and_freed_pages_go_back() -> None:
    # In a child process: the cap lasts for the life of the process that sets it.
    script = (
        "from fleetmem import process_memory as p\n"
        "blocks = [bytearray(64 << 10) for _ in range(512)]  # under the mmap threshold\n"
        "del blocks\n"
        "print(p.limit_arenas(2), p.give_back())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["True", "True"]


def test_the_local_model_shrinks_onnxruntimes_arena_after_each_run() -> None:
    # A whole arena kept the largest batch's buffers for good: 1,450 MiB resident after 600
    # episodes were embedded, against 218-222 MiB when it is shrunk after each run.
    from fleetmem.embed.local import LocalMiniLM

    embedder = LocalMiniLM()
    try:
        loaded = embedder._ensure_loaded()
    except Exception as exc:  # the model package is a test dependency; say so if absent
        pytest.fail(f"the local model did not load: {exc}")
    shrink = loaded.run_options.get_run_config_entry("memory.enable_memory_arena_shrinkage")
    assert shrink == "cpu:0"
    vectors = embedder.embed(["a shrunk arena still embeds", "and so does a second text"])
    assert vectors.shape == (2, 384)
