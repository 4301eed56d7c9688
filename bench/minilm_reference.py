"""Write src/codeseam/embed/minilm_reference.json: the torch vectors of the probe texts.

    pip install 'codeseam[st]' && python bench/minilm_reference.py

The bundled model's ONNX graph is written without torch (embed/bert_onnx.py); before a
graph is published, embed/onnx_cache.py checks its vectors of ``onnx_cache.PROBES`` against
these (cosine >= 0.9999), for the model files they were made from (their SHA-256). Run this
again only when the bundled model wheel changes. It needs torch and sentence-transformers
(the ``st`` extra); nothing at run time does.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from codeseam.embed.bundled import bundled_model_dir  # noqa: E402
from codeseam.embed.onnx_cache import PROBES, REFERENCE, model_files_hash  # noqa: E402
from codeseam.embed.st import load_sentence_transformer  # noqa: E402


def main() -> None:
    import sentence_transformers
    import torch

    model_dir = bundled_model_dir()
    model = load_sentence_transformer(str(model_dir), threads=1, local_files_only=True)
    vectors = model.encode(list(PROBES), convert_to_numpy=True, show_progress_bar=False,
                           normalize_embeddings=False)
    data = {"model": "all-MiniLM-L6-v2 (src/codeseam/embed/models)", "model_sha256": model_files_hash(model_dir),
            "made_with": {"torch": torch.__version__, "sentence-transformers": sentence_transformers.__version__},
            "probes": list(PROBES), "vectors": [[float(f"{x:.7g}") for x in row] for row in vectors]}
    REFERENCE.write_text(json.dumps(data) + "\n", encoding="utf-8")
    print(f"wrote {REFERENCE} ({len(PROBES)} vectors of {vectors.shape[1]})")


if __name__ == "__main__":
    main()
