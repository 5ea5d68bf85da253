"""A small value network in numpy: features of a card -> the points still to come from the start of a turn.

Two hidden layers (tanh) and a linear output, trained by Adam on the mean squared error. Targets are scaled by
`scale` (points / scale) so that the weights stay near one whatever the variant's scores. numpy is enough: the
network is a few thousand weights, the batches are large, and a forward pass over a million cards takes well
under a second, so a deep-learning library would add a heavy dependency and no speed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


class ValueNet:
    """features (n, inputs) -> values (n,) in points."""

    def __init__(self, inputs: int, hidden: int = 128, scale: float = 100.0, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.scale = float(scale)
        self.params = {
            "w1": rng.normal(0, 1 / np.sqrt(inputs), (inputs, hidden)),
            "b1": np.zeros(hidden),
            "w2": rng.normal(0, 1 / np.sqrt(hidden), (hidden, hidden)),
            "b2": np.zeros(hidden),
            "w3": rng.normal(0, 1 / np.sqrt(hidden), (hidden, 1)),
            "b3": np.zeros(1),
        }
        self.mean = np.zeros(inputs)  # input standardisation, set from the first training data
        self.std = np.ones(inputs)
        self._m = {k: np.zeros_like(v) for k, v in self.params.items()}
        self._v = {k: np.zeros_like(v) for k, v in self.params.items()}
        self._t = 0

    @property
    def inputs(self) -> int:
        return int(self.params["w1"].shape[0])

    def fit_inputs(self, x: np.ndarray) -> None:
        """Standardise the inputs by `x`'s mean and spread (a constant feature is left as it is)."""
        self.mean = x.mean(axis=0)
        std = x.std(axis=0)
        self.std = np.where(std > 1e-9, std, 1.0)

    def _forward(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        p = self.params
        z = (x - self.mean) / self.std
        h1 = np.tanh(z @ p["w1"] + p["b1"])
        h2 = np.tanh(h1 @ p["w2"] + p["b2"])
        return z, h1, h2, (h2 @ p["w3"] + p["b3"])[:, 0]

    def predict(self, x: np.ndarray, batch: int = 1 << 16) -> np.ndarray:
        """Values in points, `batch` rows at a time (bounded memory for a whole state table)."""
        out = np.empty(len(x))
        for lo in range(0, len(x), batch):
            out[lo : lo + batch] = self._forward(x[lo : lo + batch])[3]
        return out * self.scale

    def step(self, x: np.ndarray, y: np.ndarray, lr: float) -> float:
        """One Adam step on a batch (targets in points); the batch's mean squared error in points^2."""
        p = self.params
        z, h1, h2, out = self._forward(x)
        err = out - y / self.scale
        n = len(x)
        g_out = (2.0 / n) * err[:, None]
        grads = {"w3": h2.T @ g_out, "b3": g_out.sum(axis=0)}
        g_h2 = (g_out @ p["w3"].T) * (1 - h2 * h2)
        grads["w2"], grads["b2"] = h1.T @ g_h2, g_h2.sum(axis=0)
        g_h1 = (g_h2 @ p["w2"].T) * (1 - h1 * h1)
        grads["w1"], grads["b1"] = z.T @ g_h1, g_h1.sum(axis=0)
        self._t += 1
        b1, b2, eps = 0.9, 0.999, 1e-8
        for k, g in grads.items():
            self._m[k] = b1 * self._m[k] + (1 - b1) * g
            self._v[k] = b2 * self._v[k] + (1 - b2) * g * g
            mhat = self._m[k] / (1 - b1**self._t)
            vhat = self._v[k] / (1 - b2**self._t)
            p[k] -= lr * mhat / (np.sqrt(vhat) + eps)
        return float(np.mean(err * err)) * self.scale**2

    def train(
        self, x: np.ndarray, y: np.ndarray, epochs: float, lr: float, rng: np.random.Generator, batch: int = 512
    ) -> float:
        """`epochs` passes of shuffled minibatches over (x, y); the last epoch's mean squared error (points^2)."""
        steps = max(1, int(epochs * len(x) / batch))
        losses = []
        order = rng.permutation(len(x))
        at = 0
        for _ in range(steps):
            if at + batch > len(x):
                order, at = rng.permutation(len(x)), 0
            rows = order[at : at + batch]
            at += batch
            losses.append(self.step(x[rows], y[rows], lr))
        tail = max(1, min(len(losses), len(x) // batch))
        return float(np.mean(losses[-tail:]))

    def save(self, path: Path, **meta: np.ndarray | str | float | int) -> None:
        """The weights, the input standardisation and `meta` in one .npz file."""
        arrays = {f"p_{k}": v for k, v in self.params.items()}
        arrays.update(mean=self.mean, std=self.std, scale=np.array(self.scale))
        arrays.update({f"meta_{k}": np.asarray(v) for k, v in meta.items()})
        np.savez(path, **arrays)  # type: ignore[arg-type]

    @classmethod
    def load(cls, path: Path) -> tuple[ValueNet, dict[str, np.ndarray]]:
        """A network saved by `save`, and its meta (arrays; a string is a 0-d array)."""
        with np.load(path, allow_pickle=False) as f:
            net = cls(int(f["p_w1"].shape[0]), int(f["p_w1"].shape[1]), float(f["scale"]))
            net.params = {k[2:]: f[k].copy() for k in f.files if k.startswith("p_")}
            net.mean, net.std = f["mean"].copy(), f["std"].copy()
            meta = {k[5:]: f[k].copy() for k in f.files if k.startswith("meta_")}
        return net, meta
