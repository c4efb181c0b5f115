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

    def _forward_alphas(self, emissions: torch.Tensor, mask: torch.Tensor) -> list[torch.Tensor]:
        """alpha_t[b, k] = log-sum of the scores of all prefixes ending in tag k at t
        (including emission t); past a sequence's end alpha stays at its last value."""
        alpha = self.start.unsqueeze(0) + emissions[:, 0]
        alphas = [alpha]
        trans = self.transitions.unsqueeze(0)
        for t in range(1, emissions.size(1)):
            nxt = torch.logsumexp(alpha.unsqueeze(2) + trans, dim=1) + emissions[:, t]
            alpha = torch.where(mask[:, t].unsqueeze(1), nxt, alpha)
            alphas.append(alpha)
        return alphas

    def log_partition(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        alpha = self._forward_alphas(emissions, mask)[-1]
        return torch.logsumexp(alpha + self.end.unsqueeze(0), dim=1)

    def log_likelihood(self, emissions: torch.Tensor, tags: torch.Tensor,
                       mask: torch.Tensor) -> torch.Tensor:
        """log P(tags | x) for each sequence: [B]."""
        return self.sequence_score(emissions, tags, mask) - self.log_partition(emissions, mask)

    # -- inference ----------------------------------------------------------------
    def marginals(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """P(y_t = k | x) by forward-backward: [B, L, T] (zeros at padding)."""
        B, L, T = emissions.shape
        alphas = torch.stack(self._forward_alphas(emissions, mask), dim=1)      # [B, L, T]
        end = self.end.unsqueeze(0).expand(B, T)
        beta = end
        betas = [beta]
        trans = self.transitions.unsqueeze(0)
        for t in range(L - 2, -1, -1):
            nxt = torch.logsumexp(trans + (emissions[:, t + 1] + beta).unsqueeze(1), dim=2)
            beta = torch.where(mask[:, t + 1].unsqueeze(1), nxt, end)
            betas.append(beta)
        betas.reverse()
        betas_t = torch.stack(betas, dim=1)
        log_z = torch.logsumexp(alphas[:, -1] + self.end.unsqueeze(0), dim=1)     # [B]
        probs = torch.exp(alphas + betas_t - log_z.view(B, 1, 1))
        return probs * mask.unsqueeze(2).to(probs.dtype)

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
