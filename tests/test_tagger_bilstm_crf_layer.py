"""The CRF layer of the bilstm-crf tagger against brute-force enumeration."""
from __future__ import annotations

import itertools

import pytest

torch = pytest.importorskip("torch")

from deid_annotator.taggers.bilstm_crf.crf_layer import CRF  # noqa: E402


def _setup(seed=0, B=3, L=4, T=3):
    g = torch.Generator().manual_seed(seed)
    crf = CRF(T)
    with torch.no_grad():
        crf.transitions.copy_(torch.randn(T, T, generator=g))
        crf.start.copy_(torch.randn(T, generator=g))
        crf.end.copy_(torch.randn(T, generator=g))
    emissions = torch.randn(B, L, T, generator=g, dtype=torch.float32)
    lengths = [L, L - 1, 1][:B]
    mask = torch.tensor([[t < n for t in range(L)] for n in lengths])
    return crf, emissions, mask, lengths


def _score(crf, em, seq):
    s = crf.start[seq[0]] + em[0, seq[0]]
    for t in range(1, len(seq)):
        s = s + crf.transitions[seq[t - 1], seq[t]] + em[t, seq[t]]
    return s + crf.end[seq[-1]]


def _all(crf, em, n):
    T = em.shape[1]
    with torch.no_grad():
        return {seq: float(_score(crf, em, seq)) for seq in itertools.product(range(T), repeat=n)}


def test_partition_and_likelihood_match_enumeration():
    crf, em, mask, lengths = _setup()
    log_z = crf.log_partition(em, mask).detach()
    tags = torch.randint(0, 3, em.shape[:2], generator=torch.Generator().manual_seed(1))
    ll = crf.log_likelihood(em, tags, mask).detach()
    for b, n in enumerate(lengths):
        scores = _all(crf, em[b], n)
        brute = torch.logsumexp(torch.tensor(list(scores.values())), 0)
        assert float(log_z[b]) == pytest.approx(float(brute), abs=1e-4)
        seq = tuple(tags[b, :n].tolist())
        assert float(ll[b]) == pytest.approx(scores[seq] - float(brute), abs=1e-4)


def test_viterbi_matches_enumeration():
    for seed in range(5):
        crf, em, mask, lengths = _setup(seed)
        path = crf.viterbi(em, mask)
        for b, n in enumerate(lengths):
            scores = _all(crf, em[b], n)
            best = max(scores, key=scores.get)
            assert tuple(path[b, :n].tolist()) == best


def test_marginals_match_enumeration():
    crf, em, mask, lengths = _setup(3, T=4)
    marg = crf.marginals(em, mask)
    for b, n in enumerate(lengths):
        scores = _all(crf, em[b], n)
        z = torch.logsumexp(torch.tensor(list(scores.values())), 0)
        expected = torch.zeros(n, em.shape[2])
        for seq, s in scores.items():
            p = float(torch.exp(torch.tensor(s) - z))
            for t, k in enumerate(seq):
                expected[t, k] += p
        assert torch.allclose(marg[b, :n], expected, atol=1e-5)
        assert torch.all(marg[b, n:] == 0)
        assert torch.allclose(marg[b, :n].sum(1), torch.ones(n), atol=1e-5)


def test_gradient_of_likelihood_is_finite():
    crf, em, mask, _ = _setup()
    em.requires_grad_(True)
    tags = torch.zeros(em.shape[:2], dtype=torch.long)
    (-crf.log_likelihood(em, tags, mask).sum()).backward()
    assert torch.isfinite(em.grad).all() and torch.isfinite(crf.transitions.grad).all()


def test_forward_backward_gradient_matches_autograd():
    """log Z's hand-written gradient equals autograd's through a naive recursion."""
    crf, em, mask, _ = _setup(4, T=3)
    crf = crf.double()
    em = em.double().requires_grad_(True)
    weights = torch.tensor([1.0, -0.5, 2.0], dtype=torch.float64)
    (crf.log_partition(em, mask) * weights).sum().backward()
    fast = [em.grad.clone()] + [p.grad.clone() for p in (crf.start, crf.transitions, crf.end)]
    for p in (em, crf.start, crf.transitions, crf.end):
        p.grad = None
    alpha = crf.start + em[:, 0]
    for t in range(1, em.shape[1]):
        nxt = torch.logsumexp(alpha.unsqueeze(2) + crf.transitions, dim=1) + em[:, t]
        alpha = torch.where(mask[:, t].unsqueeze(1), nxt, alpha)
    (torch.logsumexp(alpha + crf.end, dim=1) * weights).sum().backward()
    slow = [em.grad] + [p.grad for p in (crf.start, crf.transitions, crf.end)]
    for a, b in zip(fast, slow):
        assert torch.allclose(a, b, atol=1e-8)
