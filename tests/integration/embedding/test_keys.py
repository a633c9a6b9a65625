"""provider_key: deterministic, secret-free, ordinal header ordering."""

from __future__ import annotations

from memlane.adapters.embedding.keys import canonical_headers, is_secret_header, provider_key


class TestProviderKey:
    def test_header_order_and_name_case_do_not_matter(self) -> None:
        a = provider_key(provider="openai", model="m", headers={"X-B": "2", "x-a": "1"})
        b = provider_key(provider="openai", model="m", headers={"x-a": "1", "X-B": "2"})

        assert a == b

    def test_credentials_never_enter_the_key(self) -> None:
        plain = provider_key(provider="gemini", model="m")
        with_secrets = provider_key(
            provider="gemini",
            model="m",
            headers={
                "Authorization": "Bearer s1",
                "x-goog-api-key": "s2",
                "api-key": "s3",
                "X-Api-Key": "s4",
                "X-Auth-Token": "s5",
            },
        )

        assert plain == with_secrets

    def test_everything_that_changes_vectors_changes_the_key(self) -> None:
        def key(
            model: str = "m",
            url: str = "https://a/v1",
            dims: int | None = None,
            headers: dict[str, str] | None = None,
        ) -> str:
            return provider_key(
                provider="openai",
                model=model,
                base_url=url,
                output_dimensionality=dims,
                headers=headers,
            )

        assert key() != key(model="n")
        assert key() != key(url="https://b/v1")
        assert key() != key(dims=256)
        assert key() != key(headers={"X-Region": "eu"})
        assert key() != provider_key(provider="mistral", model="m", base_url="https://a/v1")
        assert key() == key(url="https://a/v1/")

    def test_headers_sort_by_code_point_not_locale(self) -> None:
        pairs = canonical_headers({"x-b": "1", "X-a": "2", "x-_": "3", "x-Z": "4"})

        assert [name for name, _ in pairs] == ["x-_", "x-a", "x-b", "x-z"]

    def test_secret_header_names_are_recognised(self) -> None:
        assert is_secret_header("Proxy-Authorization")
        assert is_secret_header("x-goog-api-key")
        assert not is_secret_header("OpenAI-Organization")

    def test_key_is_a_sha256_hex_digest(self) -> None:
        key = provider_key(provider="local", model="multilingual-e5-small")

        assert len(key) == 64
        assert int(key, 16) >= 0
