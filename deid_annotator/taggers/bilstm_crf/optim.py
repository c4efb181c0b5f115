"""Adam (lazy for embedding tables on request) and SGD with momentum in a few lines.
torch.optim would do, but constructing one imports torch._dynamo, which costs seconds: too
much for a retrain meant to be quick."""
from __future__ import annotations

import math
from typing import Iterable

import torch


class Adam:
    def __init__(self, params: Iterable[torch.nn.Parameter], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8):
        self.params = [p for p in params if p.requires_grad]
        self.lr, self.betas, self.eps = lr, betas, eps
        self.step_count = 0
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]
        # sqrt(v) goes into these, the same bits: a fresh tensor the size of the word
        # embeddings at every step made a training 10-12 % longer (docs/benchmarks.md).
        # Made at a parameter's first dense update: a lazily updated table never needs one
        self.denominators: list[torch.Tensor | None] = [None] * len(self.params)

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self, rows: dict[int, torch.Tensor] | None = None) -> None:
        """One update. ``rows``, by ``id`` of a parameter (an embedding table): the rows the
        batch used. Only those rows are updated, moments included; the others stay as they
        are, where Adam would go on moving every row that ever had a gradient (lazy Adam,
        as TensorFlow Addons' ``LazyAdam`` and ``torch.optim.SparseAdam``)."""
        self.step_count += 1
        b1, b2 = self.betas
        c1 = 1 - b1 ** self.step_count
        c2 = 1 - b2 ** self.step_count
        step = self.lr * math.sqrt(c2) / c1
        for i, (p, m, v) in enumerate(zip(self.params, self.m, self.v)):
            if p.grad is None:
                continue
            g = p.grad
            used = None if rows is None else rows.get(id(p))
            if used is not None:
                g, m_used, v_used = g.index_select(0, used), m.index_select(0, used), v.index_select(0, used)
                m_used.mul_(b1).add_(g, alpha=1 - b1)
                v_used.mul_(b2).addcmul_(g, g, value=1 - b2)
                m.index_copy_(0, used, m_used)
                v.index_copy_(0, used, v_used)
                p.index_add_(0, used, m_used / v_used.sqrt_().add_(self.eps * math.sqrt(c2)),
                             alpha=-step)
                continue
            m.mul_(b1).add_(g, alpha=1 - b1)
            v.mul_(b2).addcmul_(g, g, value=1 - b2)
            d = self.denominators[i]
            if d is None:
                d = self.denominators[i] = torch.empty_like(p)
            torch.sqrt(v, out=d).add_(self.eps * math.sqrt(c2))
            p.addcdiv_(m, d, value=-step)


class SGD:
    def __init__(self, params: Iterable[torch.nn.Parameter], lr: float = 0.005, momentum: float = 0.9):
        self.params = [p for p in params if p.requires_grad]
        self.lr, self.momentum = lr, momentum
        self.buffers = [torch.zeros_like(p) for p in self.params]

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        for p, buf in zip(self.params, self.buffers):
            if p.grad is None:
                continue
            buf.mul_(self.momentum).add_(p.grad)
            p.add_(buf, alpha=-self.lr)
