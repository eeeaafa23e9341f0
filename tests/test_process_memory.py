"""The daemon's allocator settings (issue 20: resident memory at 100,000 episodes)."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

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
        loaded = embedder._full_session()  # the session documents are embedded by
    except Exception as exc:  # the model package is a test dependency; say so if absent
        pytest.fail(f"the local model did not load: {exc}")
    shrink = loaded.run_options.get_run_config_entry("memory.enable_memory_arena_shrinkage")
    assert shrink == "cpu:0"
    vectors = embedder.embed(["a shrunk arena still embeds", "and so does a second text"])
    assert vectors.shape == (2, 384)


# ---- the token counter, released when idle ------------------------------------------------
_RELEASE_SCRIPT = """
import gc, json
from fleetmem import process_memory, tokenize

def rss_kib():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])

text = "Deploys freeze on the last Friday of a quarter. " * 40
before = rss_kib()
first = tokenize.get_tokenizer()
counted = first.count(text)
loaded = rss_kib()
kept = tokenize.release_idle(3600.0)  # used a moment ago: kept
used = first.last_used
dropped = tokenize.release_idle(0.0, now=used + 1.0)
del first
gc.collect()
process_memory.give_back()
released = rss_kib()
again = tokenize.get_tokenizer()
print(json.dumps({
    "before": before, "loaded": loaded, "released": released, "kept": kept,
    "dropped": dropped, "same_count": again.count(text) == counted,
    "idle_again": tokenize.release_idle(3600.0),
}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_an_idle_token_counter_is_dropped_and_its_memory_given_back() -> None:
    # In a child process, so the resident figures are this tokenizer's alone.
    done = subprocess.run(
        [sys.executable, "-c", _RELEASE_SCRIPT], capture_output=True, text=True, check=True
    )
    got = json.loads(done.stdout)
    assert got["kept"] is False and got["dropped"] is True and got["idle_again"] is False
    assert got["same_count"] is True  # loaded again on the next count, with the same result
    held_mib = (got["loaded"] - got["before"]) / 1024
    freed_mib = (got["loaded"] - got["released"]) / 1024
    # The o200k_base vocabulary holds about 61 MiB; most of it must go back to the system.
    assert held_mib > 30, got
    assert freed_mib > 0.75 * held_mib, got


def test_the_daemons_jobs_release_an_idle_token_counter(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from fleetmem import tokenize
    from fleetmem.service.bootstrap import build
    from fleetmem.service.jobs import BackgroundJobs

    (tmp_path / "fleetmem.toml").write_text('[model_api]\nembedding_model = ""\n', encoding="utf-8")
    app = build(tmp_path, {})
    try:
        tokenize.get_tokenizer().count("loaded now")
        busy = BackgroundJobs(app.memory, tokenizer_idle_s=3600.0)
        busy.tick()
        assert tokenize._instance is not None  # used a moment ago: kept
        jobs = BackgroundJobs(app.memory, tokenizer_idle_s=0.0)
        with caplog.at_level(logging.INFO, logger="fleetmem.jobs"):
            jobs.tick()
        assert tokenize._instance is None
        assert "jobs.token_counter_released idle_s=0" in caplog.text
        assert tokenize.get_tokenizer().count("loaded again") > 0
    finally:
        app.close()
