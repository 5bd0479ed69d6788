"""Run the default hybrid on one corpus under one Keras backend; write P(safe) and the masks.

Used by `test_backends_agree.py` in a child process per backend, because a
process keeps the first backend Keras loads:

    python -m tests.acceptance.backend_probe --backend jax --corpus X.jsonl --out Y.npz
"""

from __future__ import annotations

import argparse
import json

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", required=True, choices=["tensorflow", "jax"])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    from deid_core.config import load_config, with_inference
    from deid_core.corpus.jsonl import read_jsonl
    from deid_core.detectors import Method, build_detector

    cfg = with_inference(load_config(), backend=args.backend, device="cpu")
    det = build_detector(Method.hybrid, cfg)
    model = det.inner.model
    texts = [d.text for d in read_jsonl(args.corpus)]
    analysed = det.inner.analyse(texts)
    masks = [[(m.start, m.end, m.label) for m in det.inner.combiner.combine(a, p)] for a, p in analysed]
    np.savez(args.out, p_safe=np.concatenate([p[:, 0] for _, p in analysed]),
             masks=np.array(json.dumps(masks)), backend=np.array(model.backend.backend), failures=det.failures)


if __name__ == "__main__":
    main()
