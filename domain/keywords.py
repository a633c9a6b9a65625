"""Domain: keyword search terms, FTS5 query construction and index-side text expansion.

Both sides of the FTS5 keyword index are decided here, so they always agree:

* Index side, `fts_document(text)`: the store writes its result into `chunks_fts(terms)`, a table
  created with `tokenize = FTS_TOKENIZER` (`unicode61`). `unicode61` indexes a whole run of CJK
  characters as ONE token, so a two-character word inside a sentence could never match (which
  is why the reference system's CJK keyword search finds almost nothing). We therefore rewrite
  every Han/kana run as space-separated overlapping bigrams followed by its single characters
  (unigrams make one-character words such as 猫 or 本 findable; they cost about one extra token
  per CJK character). Latin, Cyrillic, Arabic... text is left as `unicode61` already splits it
  at spaces and punctuation.
* Korean: words are space-separated, but particles are glued to them (서울에서 = 서울 + 에서),
  so a query for 서울 would not match the token 서울에서. Each Hangul word is indexed as the word,
  its syllable bigrams (which contain the bare noun for two-syllable nouns) and its stem with one
  trailing particle removed (which covers one-syllable and long nouns: 물을 → 물). This is the
  recommended "word + bigrams" scheme plus the stem, chosen because particle lists are never
  complete: bigrams still match when stripping fails.
* Japanese: kana and kanji form one run (okurigana stays attached: 食べる → 食べ, べる), bigrams
  as for Chinese. No dictionary segmentation: a pure-stdlib domain cannot ship one.
* Both sides first apply NFKC (full-width ＡＰＩ → API, half-width kana → kana) and drop combining
  marks (Mn): `unicode61` treats a leftover mark as a separator, which cut vowelled Arabic words
  into single letters.

Query side, `build_fts_query(query)`: every term is emitted as a double-quoted FTS5 string (`"`
doubled), so no user character is ever FTS5 syntax, and terms are OR-ed, never AND-ed (requiring
every term in one chunk leaves most multi-term queries without a hit): bm25 rewards chunks that
match more and rarer terms. Word terms are lowercased and stop words dropped unless every term is
one. CJK runs become bigrams (a one-character run stays itself); Hangul words become the word, its
particle-stripped stem and the stem's bigrams, all of which the index side also produces.

Stop-word lists have no duplicates nor multi-word entries, and Latin stop words are only function
words that are not content words in another Latin-script language (no `como`, `se`, `can`, `son`,
`hay`...): one set serves queries in every language. For the same reason `com` is not one (it is
Portuguese "with", but also the `.com` of `user@example.com`, which must keep its domain).

Against the reference (its keyword extraction and its unit tests): the vague words its tests
require dropped are stop words here too, "yesterday" in each language (yesterday, ayer, ontem,
بالأمس, 昨天, 어제, 昨日) and `thing`, `porquê`, and so are two entries its behaviour shows: `보다`
(particle and verb) and Arabic `فضلك` (its `من فضلك` is two words, so it never matches a token;
`من` already is one). Its lists are the same seven languages (English, Spanish, Portuguese,
Arabic, Chinese, Korean, Japanese); the Danish, Norwegian and Swedish lists of its newer versions
are outside the behaviour memlane follows. The rest of its vague-word lists (today, now, later,
find, show, help, get, ayuda, 今天, 最近, ...) is left out on purpose: those are content words of
notes ("find the bug", "get request", "the help page"), and dropping them would cost keyword hits
for no gain.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import Final

from memlane.domain import japanese_words
from memlane.domain.cjk import HAN, HANGUL, KANA
from memlane.domain.identifier_words import identifier_pieces

# Tokenizer of the FTS5 table; `fts_document` and `build_fts_query` are written for it. The porter
# stemmer (English suffixes; CJK n-grams pass through unchanged) lifted SciFact keyword-only nDCG@10
# from 0.655 to 0.692 (bench/RESULTS.md); the store rebuilds its keyword table when this changes.
FTS_TOKENIZER: Final = "porter unicode61 remove_diacritics 2"
# Version of what `fts_document` makes of a text. A keyword row is deleted by handing FTS5 the
# document it was built from (recomputed from the chunk's text), so a store whose rows were built
# by another version rebuilds its keyword table: bump this whenever `fts_document`'s output changes.
# 2: Japanese text also gets its whole-word terms (`domain.japanese_words`).
# 3: camelCase identifiers also get their words (`domain.identifier_words`).
FTS_DOCUMENT_VERSION: Final = "3"

# Upper bound on OR-ed terms in one MATCH expression: a pasted page must not build a huge query.
MAX_FTS_TERMS: Final = 64

# --- scripts (ranges in domain.cjk) --------------------------------------------------------------
_CJK_OR_HANGUL_RUN: Final = re.compile(f"([{HAN}{KANA}]+)|([{HANGUL}]+)")
# Query pieces: a CJK run, a Hangul word, or a word of letters/digits (as unicode61 sees words).
_QUERY_PIECE: Final = re.compile(
    f"(?P<cjk>[{HAN}{KANA}]+)|(?P<hangul>[{HANGUL}]+)|(?P<word>(?:(?![{HAN}{KANA}{HANGUL}])[^\\W_])+)"
)

# Korean particles, longest first; one is stripped from the end of a longer word.
_KOREAN_PARTICLES: Final = (
    "에서는", "으로는", "에게서", "에서", "으로", "에게", "한테", "처럼", "같이", "보다", "까지",
    "부터", "마다", "밖에", "대로", "에는", "에도", "이나", "이랑", "은", "는", "이", "가", "을",
    "를", "의", "에", "로", "와", "과", "도", "만", "랑",
)  # fmt: skip

# --- stop words (our own lists; each a tuple so tests can check for duplicates) ------------------
ENGLISH_STOP_WORDS: Final = (
    "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are",
    "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but",
    "by", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from",
    "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him",
    "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me",
    "more", "most", "my", "myself", "nor", "not", "of", "off", "on", "once", "only", "or",
    "other", "our", "ours", "ourselves", "out", "over", "please", "same", "she", "should", "so",
    "some", "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then",
    "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up",
    "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why",
    "with", "would", "you", "your", "yours", "yourself", "yourselves", "s", "t", "ll", "ve",
    "don", "doesn", "didn", "isn", "aren", "wasn", "thing", "yesterday",
)  # fmt: skip
# Only function words; `como`, `son`, `sin`, `era`, `hay`, `con`, `se` are English words or
# acronyms too, and one set serves every query language, so they are left out.
SPANISH_STOP_WORDS: Final = (
    "el", "la", "los", "las", "un", "una", "unos", "unas", "de", "del", "al", "y", "o", "en",
    "por", "para", "que", "qué", "es", "fue", "lo", "le", "les", "su", "sus", "mi", "mis", "tu",
    "tus", "este", "esta", "estos", "estas", "ese", "esa", "esos", "esas", "pero", "sobre",
    "entre", "muy", "más", "ya", "también", "cuando", "cuándo", "donde", "dónde", "cómo", "cuál",
    "quién", "porque", "está", "están", "ser", "estar", "nos", "yo", "él", "ella", "ellos",
    "nosotros", "usted", "ayer",
)  # fmt: skip
PORTUGUESE_STOP_WORDS: Final = (
    "o", "a", "os", "as", "um", "uma", "uns", "umas", "de", "do", "da", "dos", "das", "em", "no",
    "na", "nos", "nas", "ao", "aos", "à", "às", "e", "ou", "que", "por", "para", "pelo",
    "pela", "pelos", "pelas", "é", "são", "foi", "ser", "estar", "está", "não", "mais", "muito",
    "já", "também", "quando", "onde", "qual", "quem", "porque", "isso", "isto", "este", "esta",
    "esse", "essa", "aquele", "aquela", "seu", "sua", "seus", "suas", "meu", "minha", "eu",
    "ele", "ela", "eles", "elas", "nós", "você", "vocês", "há", "mas", "sobre", "entre",
    "ontem", "porquê",
)  # fmt: skip
ARABIC_STOP_WORDS: Final = (
    "في", "من", "على", "إلى", "الى", "عن", "مع", "هذا", "هذه", "ذلك", "تلك", "التي", "الذي",
    "الذين", "هو", "هي", "هم", "أنا", "نحن", "أنت", "كان", "كانت", "يكون", "ما", "ماذا", "لماذا",
    "كيف", "متى", "أين", "هل", "لا", "لم", "لن", "قد", "ثم", "أو", "و", "أن", "إن", "كل", "بعض",
    "غير", "بين", "عند", "حتى", "إذا", "لكن", "أي", "بعد", "قبل", "فقط", "أيضا", "ليس", "منذ",
    "بالأمس", "فضلك",
)  # fmt: skip
CHINESE_STOP_WORDS: Final = (
    "的", "了", "是", "在", "和", "与", "及", "或", "也", "都", "就", "而", "但", "又", "还", "被",
    "把", "对", "从", "向", "给", "让", "为", "以", "于", "之", "其", "这", "那", "哪", "个", "些",
    "我", "你", "他", "她", "它", "们", "我们", "你们", "他们", "她们", "它们", "这个", "那个",
    "这些", "那些", "什么", "怎么", "怎样", "如何", "为什么", "哪里", "哪个", "吗", "呢", "吧",
    "啊", "呀", "嘛", "有", "没有", "不", "没", "很", "太", "更", "最", "会", "能", "可以", "要",
    "想", "一个", "一些", "请", "关于", "如果", "因为", "所以", "但是", "而且", "然后", "还是",
    "已经", "之前", "之后", "昨天",
)  # fmt: skip
KOREAN_STOP_WORDS: Final = (
    "이", "그", "저", "것", "수", "등", "및", "또는", "그리고", "그러나", "하지만", "그래서",
    "또한", "즉", "더", "좀", "잘", "안", "못", "다", "매우", "아주", "너무", "정말", "나", "너",
    "우리", "저희", "당신", "그녀", "그들", "이것", "그것", "저것", "여기", "거기", "저기", "무엇",
    "뭐", "어디", "언제", "어떻게", "왜", "누구", "어느", "있다", "없다", "하다", "되다", "이다",
    "아니다", "있는", "없는", "하는", "되는", "했다", "한다", "합니다", "입니다", "있습니다",
    "없습니다", "했어요", "해요", "있어요", "대한", "대해", "위해", "통해", "관련", "때문에", "때",
    "중", "후", "전", "제발", "알려줘", "알려주세요", "해줘", "어제", "보다",
)  # fmt: skip
JAPANESE_STOP_WORDS: Final = (
    "これ", "それ", "あれ", "この", "その", "あの", "ここ", "そこ", "あそこ", "どこ", "だれ", "誰",
    "なに", "何", "いつ", "どう", "なぜ", "です", "ます", "でした", "ました", "である", "だった",
    "ない", "する", "した", "して", "いる", "いた", "ある", "あった", "なる", "なった", "こと",
    "もの", "ため", "よう", "から", "まで", "より", "など", "について", "として", "けど", "でも",
    "しかし", "そして", "また", "私", "僕", "俺", "あなた", "彼", "彼女", "ください", "教えて",
    "昨日",
)  # fmt: skip
# Lists of different scripts cannot collide, so one set serves every script; the Han entries of
# the Chinese and Japanese lists do apply to each other's text.
STOP_WORDS: Final = frozenset(
    ENGLISH_STOP_WORDS
    + SPANISH_STOP_WORDS
    + PORTUGUESE_STOP_WORDS
    + ARABIC_STOP_WORDS
    + CHINESE_STOP_WORDS
    + KOREAN_STOP_WORDS
    + JAPANESE_STOP_WORDS
)

# Han/kana stop words of 2+ characters, longest first so each position takes its longest match; a
# lookahead so that overlapping occurrences are all found.
_CJK_STOP_WORD_AT: Final = re.compile(
    "(?=("
    + "|".join(
        re.escape(w)
        for w in sorted(STOP_WORDS, key=len, reverse=True)
        if len(w) >= 2 and re.fullmatch(f"[{HAN}{KANA}]+", w)
    )
    + "))"
)


_FIRST_MARK: Final = "\u0300"  # no nonspacing mark (category Mn) lies below U+0300


def _normalize(text: str) -> str:
    """NFKC, then drop nonspacing marks (unicode61 would split words at them)."""
    if text.isascii():
        return text
    folded = japanese_words.strip_word_mark(unicodedata.normalize("NFKC", text))
    # The marks are looked up once per distinct character, not per character: a search reads
    # hundreds of candidate texts (domain/relevance.py), where a per-character loop dominated.
    marks = {
        ord(ch): None
        for ch in set(folded)
        if ch >= _FIRST_MARK and unicodedata.category(ch) == "Mn"
    }
    return folded.translate(marks) if marks else folded


def _bigrams(run: str) -> list[str]:
    return [run[i : i + 2] for i in range(len(run) - 1)]


def korean_stem(word: str) -> str:
    """Return `word` without its first matching trailing particle (only if something remains)."""
    for particle in _KOREAN_PARTICLES:
        if len(word) > len(particle) and word.endswith(particle):
            return word[: -len(particle)]
    return word


def _index_tokens_cjk(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return _bigrams(run) + list(run)


def _index_tokens_hangul(word: str) -> list[str]:
    tokens = [word]
    if len(word) >= 3:
        tokens += _bigrams(word)
    stem = korean_stem(word)
    if stem not in tokens:
        tokens.append(stem)
    return tokens


def _expand_for_index(match: re.Match[str]) -> str:
    cjk, hangul = match.group(1), match.group(2)
    tokens = _index_tokens_cjk(cjk) if cjk else _index_tokens_hangul(hangul)
    return f" {' '.join(tokens)} "


def fts_document(text: str) -> str:
    """Return the text to store in the FTS5 column for a chunk's `text`.

    Normalised (NFKC, no combining marks); every Han/kana run replaced by its bigrams and
    characters, every Hangul word by itself, its bigrams and its stem; other text unchanged.
    Then the words of its camelCase identifiers (`domain.identifier_words`); Japanese text ends
    with its marked whole-word terms (`domain.japanese_words`).
    """
    normalized = _normalize(text)
    document = _CJK_OR_HANGUL_RUN.sub(_expand_for_index, normalized)
    if pieces := identifier_pieces(normalized):
        document = f"{document} {' '.join(pieces)}"
    if text.isascii() or not japanese_words.is_japanese(normalized):
        return document
    words = japanese_words.word_runs(normalized)
    return f"{document} {' '.join(map(japanese_words.mark, words))}" if words else document


def _hangul_query_terms(word: str) -> list[str]:
    stem = korean_stem(word)
    terms = [word, stem]
    if len(stem) >= 3:
        terms += _bigrams(stem)
    return terms


def fts_query_terms(query: str) -> list[str]:
    """Return the distinct search terms of `query`, in order, as `build_fts_query` OR-s them.

    Stop words are dropped unless every term is a stop word; at most MAX_FTS_TERMS are kept.
    """
    # The first MAX_FTS_TERMS distinct terms of each kind, in order; the scan stops once there
    # are that many content terms, so a pasted page costs no more than its first few lines.
    content: dict[str, None] = {}
    stops: dict[str, None] = {}
    for term, stop in _query_candidates(query):
        kept = stops if stop else content
        if len(kept) < MAX_FTS_TERMS:
            kept.setdefault(term)
        if len(content) >= MAX_FTS_TERMS:
            break
    return list(content or stops)


def terms_left_out(query: str) -> bool:
    """Whether `query` has more distinct content terms than the keyword search takes
    (MAX_FTS_TERMS): a pasted page is searched by its first ones, which the caller is told."""
    content: set[str] = set()
    for term, stop in _query_candidates(query):
        if not stop:
            content.add(term)
            if len(content) > MAX_FTS_TERMS:
                return True
    return False


def marks_only(query: str) -> bool:
    """Whether `query` holds no letter, digit or pictograph, only punctuation, math signs and
    spaces (`*`, `:`, `"?"`): both legs would rank whatever they rank for nothing."""
    return all(
        unicodedata.category(c)[0] in "PZC" or unicodedata.category(c) in _SIGNS for c in query
    )


# Symbol categories that carry no subject: math (+ = <), currency ($ €), modifiers (^ `).
# Other symbols (So: 🚫, ©, ✓) may be what a note holds, and are searched.
_SIGNS: Final = frozenset({"Sm", "Sc", "Sk"})


def stop_words_only(query: str) -> list[str] | None:
    """The words of `query` when every one is a stop word ("what is it"), else None (a query
    with any content term, or none at all). Such a query asks for nothing in particular: both
    legs would rank whatever shares its filler words."""
    terms: dict[str, None] = {}
    for term, stop in _query_candidates(query):
        if not stop:
            return None
        terms.setdefault(term)
    return list(terms) or None


def _covered_by_stop_words(run: str) -> set[int]:
    """Return the positions of `run` inside an occurrence of a CJK stop word of 2+ characters."""
    covered: set[int] = set()
    for match in _CJK_STOP_WORD_AT.finditer(run):
        start = match.start()
        covered.update(range(start, start + len(match.group(1))))
    return covered


def _cjk_query_candidates(run: str) -> Iterator[tuple[str, bool]]:
    if len(run) == 1:
        yield run, run in STOP_WORDS
        return
    # A query is searched as bigrams, so a stop word of 3+ characters (为什么, について) would
    # otherwise leak its pieces (为什, につ, つい, いて). A bigram is a stop term when it is one, or
    # when both its characters lie inside stop words of 2+ characters (て教 in について教えて).
    covered = _covered_by_stop_words(run)
    for i, t in enumerate(_bigrams(run)):
        yield t, t in STOP_WORDS or (i in covered and i + 1 in covered)


def _query_candidates(query: str) -> Iterator[tuple[str, bool]]:
    """Yield (term, is_stop_word) for each query piece, in order (duplicates included)."""
    for piece in _QUERY_PIECE.finditer(_normalize(query).lower()):
        if cjk := piece.group("cjk"):
            yield from _cjk_query_candidates(cjk)
        elif hangul := piece.group("hangul"):
            stop = hangul in STOP_WORDS or korean_stem(hangul) in STOP_WORDS
            for t in _hangul_query_terms(hangul):
                yield t, stop
        else:
            word = piece.group("word")
            yield word, word in STOP_WORDS


def quote_fts_term(term: str) -> str:
    """Quote one term as an FTS5 string: inside double quotes nothing is syntax but `"`."""
    return '"' + term.replace('"', '""') + '"'


def japanese_word_terms(query: str) -> list[str]:
    """The marked whole-word terms of a Japanese `query` that are not stop words ([] otherwise).

    They are index terms, not words a person reads, so `fts_query_terms` (which feeds the word
    share, the time boosts and the page's highlighting) leaves them out; only the MATCH has them.
    """
    if query.isascii():
        return []
    normalized = _normalize(query).lower()
    if not japanese_words.is_japanese(normalized):
        return []
    words = dict.fromkeys(japanese_words.word_runs(normalized))
    return [japanese_words.mark(w) for w in words if w not in STOP_WORDS]


def identifier_terms(query: str) -> list[str]:
    """The words of `query`'s camelCase identifiers that are not stop words nor already its terms
    (`relevanceFloor` -> relevance, floor). Like the Japanese word terms, only the MATCH has them:
    they find what wrote the words apart; the word share and the highlighting keep the name."""
    pieces = identifier_pieces(_normalize(query))
    if not pieces:
        return []
    terms = set(fts_query_terms(query))
    found = dict.fromkeys(p.lower() for p in pieces)
    return [p for p in found if p not in STOP_WORDS and p not in terms]


def build_fts_query(query: str) -> str | None:
    """Return a MATCH expression OR-ing the quoted terms of `query`, or None if none remain."""
    terms = fts_query_terms(query)
    if not terms:
        return None
    # A query of stop words only keeps them as terms; it gets no word terms (all would be stops).
    extra = identifier_terms(query) + japanese_word_terms(query)
    return " OR ".join(
        quote_fts_term(t) for t in terms + extra[: max(0, MAX_FTS_TERMS - len(terms))]
    )
