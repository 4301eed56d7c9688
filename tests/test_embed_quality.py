"""The bundled model's int8 fast path against its fp32 export, on real code (issue 16).

Tolerance, stated: over real stdlib chunks (the ``indexed_text`` codeseam embeds), every int8
vector is within cosine 0.99 of its fp32 vector and the mean is at least 0.997 (measured with
codeseam's recipe: min 0.996-0.997, mean 0.998 on an AVX2-only EPYC and an AVX-512 VNNI Xeon,
bench/results/int8.md, int8-vnni.md; the full-range graph that saturated on the EPYC measured
0.9946 / 0.9969 on these texts); and for code-search
queries over those chunks, the int8 top 5 shares at least 4 of 5 chunks with the fp32 top 5 on
average, and for every query int8's best chunk is fp32's best or a near-tie of it: its fp32
score within ``NEAR_TIE`` of the best. (The rule was "the same best chunk for 90 % of the
queries" until the batch size went from 32 to 8: int8's activations are quantised per batch, so
the batch moves its vectors by a few thousandths, and on an AVX-512 VNNI Xeon the ten queries
gave 10, 8, 9 and 9 of 10 at batches 32, 16, 8 and 4, every flip between two chunks whose fp32
scores were 0.005 or 0.010 apart. Counting flips of near-ties measured the batch, not the
graph.) Retrieval itself is judged by ``codeseam eval`` (MRR within 0.005 of fp32 on stdlib-dev
and repos-dev, README)."""

from __future__ import annotations

import sysconfig
from pathlib import Path

import numpy as np
import pytest

from codeseam.chunk import chunk_file
from codeseam.embed.bundled import ID, BundledEmbedder

pytestmark = pytest.mark.integration

STDLIB = Path(sysconfig.get_paths()["stdlib"])
FILES = ["heapq.py", "bisect.py", "fnmatch.py", "base64.py", "textwrap.py"]
QUERIES = ["push an item onto a heap", "find the insertion point in a sorted list", "translate a shell pattern to a regex",
           "decode base64 data", "wrap a paragraph to a given width", "merge several sorted inputs",
           "encode bytes as ascii85", "remove common leading whitespace", "n smallest elements",
           "case-insensitive filename matching"]
MIN_COSINE, MEAN_COSINE, TOP5_OVERLAP, NEAR_TIE = 0.99, 0.997, 4.0, 0.02


@pytest.fixture(scope="module")
def embedders(tmp_path_factory):
    cache = tmp_path_factory.mktemp("models")
    fp32 = BundledEmbedder(cache, threads=2, precision="fp32")
    int8 = BundledEmbedder(cache, threads=2, precision="int8")
    assert fp32.prepare() is not None and int8.prepare() is not None  # ONNX export, then the int8 graph
    return fp32, int8


def test_int8_vectors_and_rankings_stay_within_tolerance_of_fp32(embedders):
    fp32, int8 = embedders
    assert fp32.id == ID and int8.id.startswith(ID + "@int8-") and int8.id != fp32.id
    texts = []
    for name in FILES:
        texts += [c.indexed_text for c in chunk_file(name, (STDLIB / name).read_text(encoding="utf-8"))]
    a, b = fp32.embed_documents(texts), int8.embed_documents(texts)
    cos = (a * b).sum(axis=1)  # unit vectors
    assert cos.min() >= MIN_COSINE and cos.mean() >= MEAN_COSINE, (cos.min(), cos.mean())

    overlaps, _, gaps = agreement(a, b, fp32, int8)
    assert np.mean(overlaps) >= TOP5_OVERLAP and max(gaps) <= NEAR_TIE, (overlaps, gaps)


def agreement(a, b, fp32, int8) -> tuple[list[int], int, list[float]]:
    """For each of QUERIES: how many of the fp32 top 5 over ``a`` the int8 top 5 over ``b``
    holds; for how many queries the best chunk is the same; and how far below fp32's best (in
    fp32 scores) int8's best chunk scores, 0 where both pick the same (bench/bench_int8.py too)."""
    overlaps, same_best, gaps = [], 0, []
    for q in QUERIES:
        score_a, score_b = a @ fp32.embed_query(q), b @ int8.embed_query(q)
        top_a, top_b = np.argsort(-score_a)[:5], np.argsort(-score_b)[:5]
        overlaps.append(int(len(set(top_a) & set(top_b))))
        same_best += int(top_a[0] == top_b[0])
        gaps.append(float(score_a[top_a[0]] - score_a[top_b[0]]))
    return overlaps, same_best, gaps
