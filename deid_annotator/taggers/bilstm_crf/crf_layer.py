"""A linear-chain CRF layer in torch: batched, masked, log-space.

Scores a tag sequence ``y`` of a sequence with emissions ``E`` as
``start[y0] + sum_t E[t, y_t] + sum_t trans[y_{t-1}, y_t] + end[y_last]``.
Gives the log-likelihood (for training), Viterbi decoding, and forward-backward
marginals ``P(y_t = k | x)`` (for confidences). Masks are left-aligned: each
sequence is ``mask[b, :length_b]`` true, the rest false; every sequence has at
least one token.
"""
from __future__ import annotations

import torch
from torch import nn


class CRF(nn.Module):
    def __init__(self, num_tags: int):
        super().__init__()
        if num_tags < 1:
            raise ValueError("a CRF needs at least one tag")
        self.num_tags = num_tags
        self.transitions = nn.Parameter(torch.empty(num_tags, num_tags))  # [from, to]
        self.start = nn.Parameter(torch.empty(num_tags))
        self.end = nn.Parameter(torch.empty(num_tags))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.uniform_(self.transitions, -0.1, 0.1)
        nn.init.uniform_(self.start, -0.1, 0.1)
        nn.init.uniform_(self.end, -0.1, 0.1)

    # -- scores -----------------------------------------------------------------
    def sequence_score(self, emissions: torch.Tensor, tags: torch.Tensor,
                       mask: torch.Tensor) -> torch.Tensor:
        """Unnormalised score of ``tags`` [B, L] for each sequence: [B]."""
        maskf = mask.to(emissions.dtype)
        emit = emissions.gather(2, tags.unsqueeze(2)).squeeze(2)                  # [B, L]
        score = self.start[tags[:, 0]] + (emit * maskf).sum(1)
        if tags.size(1) > 1:
            trans = self.transitions[tags[:, :-1], tags[:, 1:]]                   # [B, L-1]
            score = score + (trans * maskf[:, 1:]).sum(1)
        last = mask.long().sum(1) - 1
        score = score + self.end[tags.gather(1, last.unsqueeze(1)).squeeze(1)]
        return score

    def log_partition(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """log Z(x) of each sequence: [B]. Its gradient is computed by forward-backward
        (the marginals), not by back-propagating through the recursion: much faster."""
        return _LogPartition.apply(emissions, mask, self.start, self.transitions, self.end)

    def log_likelihood(self, emissions: torch.Tensor, tags: torch.Tensor,
                       mask: torch.Tensor) -> torch.Tensor:
        """log P(tags | x) for each sequence: [B]."""
        return self.sequence_score(emissions, tags, mask) - self.log_partition(emissions, mask)

    # -- inference ----------------------------------------------------------------
    def marginals(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """P(y_t = k | x) by forward-backward: [B, L, T] (zeros at padding), in float64: in
        float32, log-scores of a few hundred keep ~1e-5 of precision, and a note's marginals
        moved by that much with the other windows of its batch (matrix products round
        differently for different batch sizes)."""
        with torch.no_grad():
            dtype = emissions.dtype
            emissions = emissions.double()
            start, transitions, end = self.start.double(), self.transitions.double(), self.end.double()
            alphas = _alphas(emissions, mask, start, transitions)
            log_z = torch.logsumexp(alphas[:, -1] + end.unsqueeze(0), dim=1)
            betas = _betas(emissions, mask, transitions, end)
            probs = torch.exp(alphas + betas - log_z.view(-1, 1, 1))
            return (probs * mask.unsqueeze(2).to(probs.dtype)).to(dtype)

    def viterbi(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The best tag sequence of each sequence: [B, L] (tags past a sequence's end are
        copies of its last tag; cut them off with the mask)."""
        B, L, T = emissions.shape
        score = self.start.unsqueeze(0) + emissions[:, 0]
        trans = self.transitions.unsqueeze(0)
        identity = torch.arange(T, device=emissions.device).unsqueeze(0).expand(B, T)
        pointers = []
        for t in range(1, L):
            best, idx = (score.unsqueeze(2) + trans).max(dim=1)                    # over 'from'
            m = mask[:, t].unsqueeze(1)
            score = torch.where(m, best + emissions[:, t], score)
            pointers.append(torch.where(m, idx, identity))
        tag = (score + self.end.unsqueeze(0)).argmax(dim=1)                        # [B]
        path = [tag]
        for ptr in reversed(pointers):
            tag = ptr.gather(1, tag.unsqueeze(1)).squeeze(1)
            path.append(tag)
        path.reverse()
        return torch.stack(path, dim=1)


def _alphas(emissions, mask, start, transitions) -> torch.Tensor:
    """alpha[b, t, k]: log-sum of the scores of all prefixes ending in tag k at t (emission
    t included); past a sequence's end alpha keeps its last value. [B, L, T]"""
    # log-sum-exp as a product in exp space, shifted by the maxima (a matrix product is
    # much cheaper than exp/log of [B, T, T] at every step)
    tmax = transitions.max()
    exp_trans = torch.exp(transitions - tmax)
    alpha = start.unsqueeze(0) + emissions[:, 0]
    alphas = [alpha]
    for t in range(1, emissions.size(1)):
        m = alpha.max(dim=1, keepdim=True).values
        nxt = torch.log(torch.exp(alpha - m) @ exp_trans) + (m + tmax) + emissions[:, t]
        alpha = torch.where(mask[:, t].unsqueeze(1), nxt, alpha)
        alphas.append(alpha)
    return torch.stack(alphas, dim=1)


def _betas(emissions, mask, transitions, end, pair_weights=None):
    """beta[b, t, k]: log-sum of the scores of all suffixes after tag k at t (end
    transition included, emission t excluded). [B, L, T]. With ``pair_weights`` = (alphas,
    log_z, weight [B]) also returns sum_b weight_b * sum_t P(y_{t-1}=i, y_t=j) [T, T]."""
    B, L, T = emissions.shape
    end_b = end.unsqueeze(0).expand(B, T)
    beta = end_b
    betas = [beta]
    trans = transitions.unsqueeze(0)
    tmax = transitions.max()
    exp_trans_t = torch.exp(transitions - tmax).t()
    pair_sum = torch.zeros_like(transitions) if pair_weights is not None else None
    for t in range(L - 1, 0, -1):
        after = emissions[:, t] + beta                                     # [B, T]
        valid = mask[:, t].unsqueeze(1)
        if pair_sum is not None:
            alphas, log_z, weight = pair_weights
            pair = torch.exp(alphas[:, t - 1].unsqueeze(2) + trans + after.unsqueeze(1)
                             - log_z.view(B, 1, 1))
            w = weight * mask[:, t].to(pair.dtype)
            pair_sum += (pair * w.view(B, 1, 1)).sum(0)
        m = after.max(dim=1, keepdim=True).values
        nxt = torch.log(torch.exp(after - m) @ exp_trans_t) + (m + tmax)
        beta = torch.where(valid, nxt, end_b)
        betas.append(beta)
    betas.reverse()
    out = torch.stack(betas, dim=1)
    return out if pair_weights is None else (out, pair_sum)


class _LogPartition(torch.autograd.Function):
    """log Z with a forward-backward gradient: d logZ / d emission[t, k] = P(y_t = k),
    d / d trans[i, j] = sum_t P(y_{t-1} = i, y_t = j), d / d start, end = P(first, last tag)."""

    @staticmethod
    def forward(ctx, emissions, mask, start, transitions, end):
        with torch.no_grad():
            alphas = _alphas(emissions, mask, start, transitions)
            log_z = torch.logsumexp(alphas[:, -1] + end.unsqueeze(0), dim=1)
        ctx.save_for_backward(emissions, mask, start, transitions, end, alphas, log_z)
        return log_z

    @staticmethod
    def backward(ctx, grad):
        emissions, mask, start, transitions, end, alphas, log_z = ctx.saved_tensors
        with torch.no_grad():
            betas, pair_sum = _betas(emissions, mask, transitions, end, (alphas, log_z, grad))
            unary = torch.exp(alphas + betas - log_z.view(-1, 1, 1)) * mask.unsqueeze(2).to(alphas.dtype)
            g = grad.view(-1, 1, 1)
            grad_em = unary * g
            grad_start = grad_em[:, 0].sum(0)
            last = mask.long().sum(1) - 1
            grad_end = grad_em[torch.arange(emissions.size(0)), last].sum(0)
        return grad_em, None, grad_start, pair_sum, grad_end
