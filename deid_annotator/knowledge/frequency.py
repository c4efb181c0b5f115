"""Word frequencies on the Zipf scale (log10 of occurrences per billion words) from
``wordfreq`` (code Apache-2.0, data CC-BY-SA 4.0), in every language it has: PHI words are
rare (median Zipf about 3 in physionet-dev against 4.8 for the other words), so a word's
frequency bin tells a tagger what the project's ~1,000 PHI alone cannot (that "Healey" is
rarer than "heparin" in general English)."""
from __future__ import annotations

import threading
from functools import lru_cache

#: Languages a frequency list is looked for in (wordfreq's "large" or "best" lists).
_lock = threading.Lock()
_shared: dict[str, "ZipfBins"] = {}


class ZipfBins:
    """``bin(word)``: "0" for a word the list lacks, else the integer part of its Zipf
    frequency ("1" .. "7"), case folded."""

    def __init__(self, lang: str):
        import wordfreq

        self.lang = lang
        self._zipf = wordfreq.zipf_frequency
        self.bin = lru_cache(maxsize=200_000)(self._bin)

    def _bin(self, word: str) -> str:
        z = self._zipf(word, self.lang)
        return str(min(int(z), 7)) if z > 0 else "0"


def zipf_bins_for(lang: str) -> ZipfBins | None:
    """Frequency bins for ``lang`` when wordfreq has a list for it (or is not installed:
    None), shared per language."""
    code = lang.split("-")[0].lower()
    with _lock:
        if code in _shared:
            return _shared[code]
        try:
            import wordfreq
        except ImportError:
            return None
        if code not in wordfreq.available_languages():
            return None
        _shared[code] = ZipfBins(code)
        return _shared[code]
