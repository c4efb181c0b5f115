"""Adam and SGD with momentum in a few lines. torch.optim would do, but constructing one
imports torch._dynamo, which costs seconds: too much for a retrain meant to be quick."""
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
        # sqrt(v) goes into these: a fresh tensor the size of the word embeddings at every
        # step cost 10 % of a training (page faults on the new memory); the same bits
        self.denominators = [torch.empty_like(p) for p in self.params]

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        self.step_count += 1
        b1, b2 = self.betas
        c1 = 1 - b1 ** self.step_count
        c2 = 1 - b2 ** self.step_count
        step = self.lr * math.sqrt(c2) / c1
        for p, m, v, d in zip(self.params, self.m, self.v, self.denominators):
            if p.grad is None:
                continue
            g = p.grad
            m.mul_(b1).add_(g, alpha=1 - b1)
            v.mul_(b2).addcmul_(g, g, value=1 - b2)
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
