"""The exception tree, in one place.

Every error a user can cause (a bad spec, an unreachable endpoint, an unknown model) is a
`UserError` whose message is one paragraph saying what happened and what to do; the CLI prints
it without a traceback. Failures of single requests are not exceptions: they become records with
an `ErrorKind` (see `scoville.records.model`).
"""

from __future__ import annotations


class ScovilleError(Exception):
    """Base of all errors raised on purpose by scoville."""


class UserError(ScovilleError):
    """A mistake the user can fix; the message says how. Printed without a traceback."""


class SpecError(UserError):
    """The benchmark spec (or an override) is malformed or inconsistent."""


class TargetError(UserError):
    """The target cannot be used: unreachable, wrong model name, missing key, failed to start."""


class TokenizerError(UserError):
    """No tokenizer could be loaded for the target, or prompts cannot be made exact."""


class DataError(UserError):
    """An input file (trace, bundle, claim file, catalogue) is malformed."""


class StorageError(ScovilleError):
    """A file of the run could not be written (disk full, read-only, quota). The run stops;
    the message says what is on disk. Not a user mistake in the input: exit code 4."""
