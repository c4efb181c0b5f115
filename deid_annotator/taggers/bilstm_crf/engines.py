"""What runs a trained network at prediction: numpy on CPU, so that tagging never imports
torch (~2 s of a `tag` command's start-up), and torch on a CUDA device.

Both take the same arrays (:class:`.batching.WindowArrays`) and give numpy results: the
char BiLSTM's features of distinct token texts, and per batch the Viterbi paths [B, L] and
CRF marginals [B, L, T]."""
from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Iterator

import numpy as np

from .batching import WindowArrays, make_prediction_batch
from .numpy_network import NumpyNetwork


def cuda_wanted(device: str) -> bool:
    """Whether ``device`` (auto | cpu | cuda) means running on CUDA. For ``auto`` torch is
    imported only where an NVIDIA driver could be present (or torch is loaded already)."""
    if device == "cpu":
        return False
    if device == "cuda":
        return True
    if "torch" not in sys.modules and (sys.platform == "darwin" or (
            sys.platform.startswith("linux") and not os.path.exists("/proc/driver/nvidia/version"))):
        return False
    import torch

    return torch.cuda.is_available()


@contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Torch's intra-op threads set to ``n`` (None: left as they are), restored after."""
    if not n:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class NumpyEngine:
    """The network in numpy (:class:`.numpy_network.NumpyNetwork`), on the CPU."""

    #: worker threads: the default (one per usable core)
    workers: int | None = None

    def __init__(self, network: NumpyNetwork):
        self.network = network

    @contextmanager
    def running(self) -> Iterator[None]:
        # One BLAS thread per call: the worker threads already keep the cores busy, and
        # BLAS threads on top of them spin against each other.
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1, user_api="blas"):
            yield

    def char_features(self, chars: np.ndarray, char_lengths: np.ndarray) -> np.ndarray:
        return self.network.char_features(chars, char_lengths)

    def decode(self, arrays: WindowArrays, char_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        knowledge = None if arrays.knowledge_ids is None else (arrays.knowledge_ids,
                                                               arrays.knowledge_values)
        return self.network.decode(arrays.words, arrays.shapes, arrays.text_ids, char_rows,
                                   arrays.lengths, knowledge)


class TorchEngine:
    """The torch network on ``device`` (CUDA: one worker thread feeds the device)."""

    workers: int | None = 1

    def __init__(self, network, device, threads: int | None):
        self.network, self.device, self.threads = network.to(device), device, threads
        self.network.eval()

    def running(self):
        return torch_threads(self.threads)

    def char_features(self, chars: np.ndarray, char_lengths: np.ndarray) -> np.ndarray:
        import torch

        with torch.inference_mode():
            out = self.network.char_features(torch.from_numpy(chars).to(self.device),
                                             torch.from_numpy(char_lengths).to(self.device))
            return out.cpu().numpy()

    def decode(self, arrays: WindowArrays, char_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        import torch

        with torch.inference_mode():              # per thread: the mode is thread-local
            batch = make_prediction_batch(arrays).to(self.device)
            path, marg = self.network.decode(batch, torch.from_numpy(char_rows).to(self.device))
            return path.cpu().numpy(), marg.float().cpu().numpy()


__all__ = ["NumpyEngine", "TorchEngine", "cuda_wanted", "torch_threads"]
