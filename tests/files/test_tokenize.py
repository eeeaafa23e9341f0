"""The one tokenizer: exact o200k_base ids, offline, text never becomes a special token."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fleetmem.tokenize import ENCODING, get_tokenizer

HERE = Path(__file__).resolve().parent
GOLDEN = HERE.parent / "golden" / "o200k_corpus_ids.json"


def test_ids_match_the_reference_tiktoken_encoding_on_the_corpus() -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert golden["encoding"] == ENCODING == "o200k_base"
    tokenizer = get_tokenizer()
    assert sorted(golden["ids"]) == sorted(p.name for p in (HERE / "corpus").iterdir())
    for name, ids in golden["ids"].items():
        text = (HERE / "corpus" / name).read_text(encoding="utf-8")
        assert tokenizer.encode(text) == ids, name
        assert tokenizer.count(text) == len(ids), name
        assert tokenizer.decode_bytes(ids) == text.encode("utf-8"), name


def test_special_token_strings_are_counted_as_text() -> None:
    tokenizer = get_tokenizer()
    ids = tokenizer.encode("<|endoftext|><|endofprompt|>")
    assert 199999 not in ids and 200018 not in ids
    assert len(ids) > 2


def test_a_lone_surrogate_is_counted_not_raised() -> None:
    tokenizer = get_tokenizer()
    assert tokenizer.count("a\ud800b") == tokenizer.count("a\ufffdb")


def test_the_tokenizer_loads_with_the_network_cut_off() -> None:
    code = (
        "import socket\n"
        "def refuse(*a, **k):\n"
        "    raise OSError('network is off in this test')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "socket.getaddrinfo = refuse\n"
        "from fleetmem.tokenize import get_tokenizer\n"
        "print(get_tokenizer().count('hello world'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "2"
