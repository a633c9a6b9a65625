"""Domain: the CJK character ranges, written once, as regex character-class bodies.

Each constant is the inside of a `[...]` class, to be composed in f-strings. Three uses need three
different sets, on purpose (they are not interchangeable; changing one changes rankings):

* `WIDE_CHARACTERS` (chunk budgets): whole Unicode blocks, punctuation and full-width forms
  included, because a tokenizer spends about one token on each of them whatever they are.
* `HAN`, `KANA` (= `HIRAGANA` + `KATAKANA`), `HANGUL` (keyword index and queries): only the
  letters FTS5's `unicode61` keeps inside words, after NFKC; Han also carries 々 〇 and the
  Hangzhou numerals, katakana its half-width forms, Hangul its jamo.
* `BASIC_CJK_LETTERS` (MMR similarity tokens, on NFC text): Han ideographs with 々 〇, the kana
  letters and the precomposed Hangul syllables; no numerals, jamo or half-width forms.
"""

from __future__ import annotations

from typing import Final

# --- building blocks ------------------------------------------------------------------------------
# Ideographs: Extension A, the unified block, compatibility ideographs, Extensions B-H and the
# compatibility supplement.
_HAN_IDEOGRAPHS: Final = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_ITERATION_AND_ZERO: Final = "\u3005\u3007"  # 々 〇
_HANGZHOU_NUMERALS: Final = "\u3021-\u3029\u3038-\u303b"
# Letters only (with ゝゞゟ and ー ヽヾヿ): not the sound marks ゛゜ nor ・ ゠, which split words.
_HIRAGANA_LETTERS: Final = "\u3041-\u3096\u309d-\u309f"
_KATAKANA_LETTERS: Final = "\u30a1-\u30fa\u30fc-\u30ff"
_KATAKANA_EXTENSIONS: Final = "\u31f0-\u31ff"
_HALFWIDTH_KATAKANA: Final = "\uff66-\uff9d"
_HANGUL_SYLLABLES: Final = "\uac00-\ud7a3"
_HANGUL_JAMO: Final = "\u1100-\u11ff\u3131-\u318e\ua960-\ua97f\ud7b0-\ud7ff"

# --- keyword segmentation -------------------------------------------------------------------------
HAN: Final = _ITERATION_AND_ZERO + _HANGZHOU_NUMERALS + _HAN_IDEOGRAPHS
HIRAGANA: Final = _HIRAGANA_LETTERS
KATAKANA: Final = _KATAKANA_LETTERS + _KATAKANA_EXTENSIONS + _HALFWIDTH_KATAKANA
KANA: Final = HIRAGANA + KATAKANA
HANGUL: Final = _HANGUL_SYLLABLES + _HANGUL_JAMO

# --- MMR tokens -----------------------------------------------------------------------------------
BASIC_CJK_LETTERS: Final = (
    _ITERATION_AND_ZERO
    + _HIRAGANA_LETTERS
    + _KATAKANA_LETTERS
    + _HAN_IDEOGRAPHS
    + _HANGUL_SYLLABLES
)

# --- token-cost estimate --------------------------------------------------------------------------
WIDE_CHARACTERS: Final = (
    "\u1100-\u11ff"  # Hangul Jamo
    "\u2e80-\u2fdf"  # CJK radicals, Kangxi radicals
    "\u3000-\u303f"  # CJK symbols and punctuation (。、「」)
    "\u3040-\u30ff"  # Hiragana, Katakana (whole blocks, marks included)
    "\u3100-\u312f"  # Bopomofo
    "\u3130-\u318f"  # Hangul compatibility Jamo
    + _KATAKANA_EXTENSIONS
    + _HAN_IDEOGRAPHS
    + "\uac00-\ud7af"  # Hangul syllables block (with its unassigned tail)
    "\uff00-\uffef"  # Halfwidth and fullwidth forms (，！ and halfwidth katakana)
)
