"""Dataset converters on tiny hand-written files in each format."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from memlane.bench.datasets import beir, locomo, longmemeval, registry
from memlane.bench.datasets.model import file_id_for
from memlane.bench.datasets.transcript import parse_lme_time, parse_locomo_time
from memlane.bench.workspace import UnitPaths, indexed_chars, materialize


def _lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.split("\n") if line]


@pytest.fixture
def beir_dir(tmp_path: Path) -> Path:
    root = tmp_path / "mini"
    (root / "qrels").mkdir(parents=True)
    corpus = [
        {"_id": "d1", "title": "Cats", "text": "Cats purr.\nThey sleep."},
        {"_id": "fin - a.pdf - 4", "title": "", "text": "금리 인상"},
    ]
    (root / "corpus.jsonl").write_text("\n".join(json.dumps(r) for r in corpus) + "\n")
    queries = [
        {"_id": "q1", "text": "purring"},
        {"_id": "q2", "text": "금리"},
        {"_id": "q3", "text": "x"},
    ]
    (root / "queries.jsonl").write_text("\n".join(json.dumps(r) for r in queries))
    (root / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\tfin - a.pdf - 4\t1\nq3\td1\t0\n"
    )
    return root


class TestBeir:
    def test_each_document_becomes_a_note_with_its_title_as_heading(self, beir_dir: Path) -> None:
        unit = beir.load_unit(beir_dir)
        by_id = {f.doc_id: f for f in unit.files}
        assert by_id["d1"].indexed_path == "memory/docs/d1.md"
        assert by_id["d1"].text == "# Cats\n\nCats purr.\nThey sleep.\n"
        assert by_id["fin - a.pdf - 4"].text == "금리 인상\n"

    def test_unsafe_ids_get_a_sha256_file_name(self, beir_dir: Path) -> None:
        unit = beir.load_unit(beir_dir)
        digest = hashlib.sha256(b"fin - a.pdf - 4").hexdigest()[:16]
        assert unit.doc_of_path()[f"memory/docs/{digest}.md"] == "fin - a.pdf - 4"

    def test_queries_come_from_positive_judgments_only(self, beir_dir: Path) -> None:
        unit = beir.load_unit(beir_dir)
        assert [(q.qid, q.text, q.gold_docs) for q in unit.queries] == [
            ("q1", "purring", {"d1": 1}),
            ("q2", "금리", {"fin - a.pdf - 4": 1}),
        ]

    def test_registry_reads_any_folder_of_the_same_format(self, beir_dir: Path) -> None:
        units = list(registry.load("scifact", beir_dir).units())
        assert len(units) == 1
        assert len(units[0].files) == 2

    def test_scifact_train_asks_the_training_claims_over_the_same_corpus(
        self, beir_dir: Path
    ) -> None:
        (beir_dir / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\nq3\td1\t1\n")
        (test_unit,) = registry.load("scifact", beir_dir).units()
        (train_unit,) = registry.load("scifact_train", beir_dir).units()
        assert [q.qid for q in test_unit.queries] == ["q1", "q2"]
        assert [(q.qid, q.gold_docs) for q in train_unit.queries] == [("q3", {"d1": 1})]
        assert train_unit.files == test_unit.files


def _locomo_sample() -> dict[str, Any]:
    return {
        "sample_id": "conv-9",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "Hi Bob!"},
                {"speaker": "Bob", "dia_id": "D1:2", "text": "Look", "blip_caption": "a dog"},
            ],
            "session_2_date_time": "12:05 am on 1 January, 2024",
            "session_2": [{"speaker": "Bob", "dia_id": "D2:1", "text": "Bye"}],
            "session_3_date_time": "9:00 am on 2 January, 2024",
        },
        "qa": [
            {"question": "Q multi", "evidence": ["D1:2; D2:1"], "category": 1},
            {"question": "Q fixed", "evidence": ["D:1:1", "D2:01"], "category": 4},
            {"question": "Q bad", "evidence": ["D", "D2:5"], "category": 2},
            {"question": "Q none", "evidence": [], "category": 3},
        ],
    }


class TestLocomo:
    def test_questions_are_asked_the_day_after_the_last_session_held(self) -> None:
        # Session 3 has a date but no turns: the last session held is session 2.
        unit = locomo.convert_sample(_locomo_sample())

        assert {q.as_of for q in unit.queries} == {"2024-01-02T00:05:00Z"}

    def test_sessions_become_transcripts_with_line_i_equal_to_turn_i(self) -> None:
        unit = locomo.convert_sample(_locomo_sample())
        assert [f.indexed_path for f in unit.files] == [
            "sessions/conv-9__session_01.jsonl",
            "sessions/conv-9__session_02.jsonl",
        ]
        first = _lines(unit.files[0].text)
        assert first[0] == {
            "type": "message",
            "message": {"role": "user", "content": "Ann: Hi Bob!"},
            "timestamp": "2023-05-08T13:56:00Z",
        }
        assert first[1]["message"] == {
            "role": "assistant",
            "content": "Bob: Look [shares image: a dog]",
        }
        assert first[1]["timestamp"] == "2023-05-08T13:56:01Z"
        assert _lines(unit.files[1].text)[0]["timestamp"] == "2024-01-01T00:05:00Z"

    def test_evidence_is_normalised_and_unresolvable_ids_dropped(self) -> None:
        unit = locomo.convert_sample(_locomo_sample())
        got = {q.text: (q.gold_lines, q.gold_docs, q.category) for q in unit.queries}
        s1, s2 = "sessions/conv-9__session_01.jsonl", "sessions/conv-9__session_02.jsonl"
        assert got == {
            "Q multi": (
                frozenset({(s1, 2), (s2, 1)}),
                {"conv-9__session_01": 1, "conv-9__session_02": 1},
                "1",
            ),
            "Q fixed": (
                frozenset({(s1, 1), (s2, 1)}),
                {"conv-9__session_01": 1, "conv-9__session_02": 1},
                "4",
            ),
        }

    def test_gold_sessions_match_the_file_ids(self) -> None:
        unit = locomo.convert_sample(_locomo_sample())
        assert set(unit.doc_of_path().values()) == {"conv-9__session_01", "conv-9__session_02"}


def _turn(role: str, content: str, has_answer: bool = False) -> dict[str, Any]:
    return {"role": role, "content": content, "has_answer": has_answer}


def _lme_items() -> list[dict[str, Any]]:
    assistant_evidence = {
        "question_id": "q_asst",
        "question_type": "single-session-assistant",
        "question": "What did you recommend?",
        "question_date": "2023/06/01 (Thu) 10:00",
        "answer_session_ids": ["answer_a"],
        "haystack_session_ids": ["filler_1", "answer_a", "filler_1"],
        "haystack_dates": [
            "2023/05/20 (Sat) 02:21",
            "2023/05/21 (Sun) 09:00",
            "2023/05/22 (Mon) 09:00",
        ],
        "haystack_sessions": [
            [_turn("user", "hello"), _turn("assistant", "hi")],
            [_turn("user", "any book?"), _turn("assistant", "Try Dune", True)],
            [_turn("user", "hello"), _turn("assistant", "hi")],
        ],
    }
    user_evidence = {
        "question_id": "q_user",
        "question_type": "single-session-user",
        "question": "Where do I keep sneakers?",
        "question_date": "2023/06/02 (Fri) 10:00",
        "answer_session_ids": ["answer_u"],
        "haystack_session_ids": ["answer_u"],
        "haystack_dates": ["2023/05/23 (Tue) 08:00"],
        "haystack_sessions": [
            [
                _turn("assistant", "How can I help?"),
                _turn("user", "sneakers are in the rack", True),
            ]
        ],
    }
    abstention = dict(user_evidence, question_id="q_user_abs")
    return [assistant_evidence, user_evidence, abstention]


class TestLongMemEval:
    def test_haystack_sessions_become_transcripts_without_the_label(self) -> None:
        unit = longmemeval.convert_question(_lme_items()[0])
        assert [f.name for f in unit.files] == [
            "filler_1.jsonl",
            "answer_a.jsonl",
            "filler_1__dup2.jsonl",
        ]
        rows = _lines(unit.files[1].text)
        assert rows[1]["message"] == {"role": "assistant", "content": "Try Dune"}
        assert rows[0]["timestamp"] == "2023-05-21T09:00:00Z"
        assert "has_answer" not in unit.files[1].text

    def test_duplicate_copies_score_as_the_original_session(self) -> None:
        unit = longmemeval.convert_question(_lme_items()[0])
        assert unit.doc_of_path()["sessions/filler_1__dup2.jsonl"] == "filler_1"

    def test_the_question_is_asked_at_its_question_date(self) -> None:
        (query,) = longmemeval.convert_question(_lme_items()[0]).queries
        pooled = longmemeval.convert_pooled(_lme_items())

        assert query.as_of == "2023-06-01T10:00:00Z"
        assert [q.as_of for q in pooled.queries] == ["2023-06-01T10:00:00Z", "2023-06-02T10:00:00Z"]

    def test_gold_is_the_answer_sessions_and_has_answer_turns(self) -> None:
        (query,) = longmemeval.convert_question(_lme_items()[0]).queries
        assert query.gold_docs == {"answer_a": 1}
        assert query.gold_lines == frozenset({("sessions/answer_a.jsonl", 2)})
        assert query.category == "single-session-assistant"

    def test_official_setting_keeps_user_turns_and_skips_assistant_only_evidence(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "lme.json"
        path.write_text(json.dumps(_lme_items()))
        units = list(longmemeval.dataset(path, "official").units())
        assert [u.unit_id for u in units] == ["q_user"]
        (only,) = units[0].files
        assert [r["message"]["role"] for r in _lines(only.text)] == ["user"]
        assert units[0].queries[0].gold_lines == frozenset({("sessions/answer_u.jsonl", 1)})

    def test_pooled_setting_indexes_every_evidence_session_once(self, tmp_path: Path) -> None:
        path = tmp_path / "lme.json"
        path.write_text(json.dumps(_lme_items()))
        (unit,) = list(longmemeval.dataset(path, "pooled").units())
        assert sorted(f.doc_id for f in unit.files) == ["answer_a", "answer_u"]
        assert [q.qid for q in unit.queries] == ["q_asst", "q_user"]


class TestTimes:
    def test_locomo_times_are_twelve_hour_clock(self) -> None:
        assert (
            parse_locomo_time("1:56 pm on 8 May, 2023").isoformat() == "2023-05-08T13:56:00+00:00"
        )
        assert parse_locomo_time("12:05 am on 1 January, 2024").hour == 0
        assert parse_locomo_time("12:30 pm on 1 January, 2024").hour == 12

    def test_longmemeval_times_drop_the_weekday(self) -> None:
        assert parse_lme_time("2023/05/20 (Sat) 02:21").isoformat() == "2023-05-20T02:21:00+00:00"

    def test_unknown_formats_are_refused(self) -> None:
        with pytest.raises(ValueError, match="LoCoMo"):
            parse_locomo_time("yesterday")


class TestWorkspace:
    def test_files_are_written_once_and_stale_ones_removed(self, tmp_path: Path) -> None:
        unit = locomo.convert_sample(_locomo_sample())
        paths = UnitPaths.for_unit(tmp_path, "locomo", "conv 9")
        assert paths.root == tmp_path / "locomo" / "conv_9"
        stale = paths.sessions_dir / "old.jsonl"
        paths.sessions_dir.mkdir(parents=True)
        stale.write_text("{}\n")
        first = materialize(unit, paths)
        again = materialize(unit, paths)
        assert (first.files, first.written, first.removed) == (2, 2, 1)
        assert (again.written, again.removed) == (0, 0)
        assert (paths.sessions_dir / "conv-9__session_01.jsonl").read_text() == unit.files[0].text

    def test_indexed_size_counts_role_prefixed_turn_text(self) -> None:
        unit = locomo.convert_sample(_locomo_sample())
        # role + ": " + text + newline: "user" 4 + 3 + "Ann: Hi Bob!" 12;
        # "assistant" 9 + 3 + "Bob: Look [shares image: a dog]" 31; "assistant" 9 + 3 + "Bob: Bye" 8
        assert indexed_chars(unit) == [(4 + 3 + 12) + (9 + 3 + 31), 9 + 3 + 8]

    def test_safe_ids_are_kept_as_file_names(self) -> None:
        assert file_id_for("answer_4be1b6b4_2") == "answer_4be1b6b4_2"
        assert file_id_for("a/b") == hashlib.sha256(b"a/b").hexdigest()[:16]


@pytest.mark.integration
class TestSharedDataCounts:
    """The converters reproduce the counts the data sets' READMEs state (skipped without data)."""

    def test_locomo_has_1982_items_with_evidence_over_272_sessions(self) -> None:
        path = registry.DEFAULT_DATA_ROOT / "locomo" / "locomo10.json"
        if not path.exists():
            pytest.skip("shared LoCoMo data not present")
        units = list(registry.load("locomo").units())
        assert sum(len(u.queries) for u in units) == 1982
        assert sum(len(u.files) for u in units) == 272

    def test_longmemeval_subset_has_48_questions_and_40_official_ones(self) -> None:
        path = registry.DEFAULT_DATA_ROOT / "longmemeval_s" / "longmemeval_s_cleaned_subset48.json"
        if not path.exists():
            pytest.skip("shared LongMemEval data not present")
        per_question = list(longmemeval.dataset(path, "per_question").units())
        official = list(longmemeval.dataset(path, "official").units())
        assert len(per_question) == 48
        assert len(official) == 40  # the 8 single-session-assistant questions drop out
        items = json.loads(path.read_text(encoding="utf-8"))
        repeats = sum(
            n - 1 for item in items for n in Counter(item["haystack_session_ids"]).values() if n > 1
        )
        dup_files = [f for u in per_question for f in u.files if "__dup" in f.name]
        assert len(dup_files) == repeats > 0
