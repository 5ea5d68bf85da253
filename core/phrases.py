"""A message players read, kept apart from the language it is said in: `N_` and `NP_` mark English messages for
the catalogs, `Phrase` keeps one's template and fields, and `_` and `ngettext` say a message in the language spoken
in this context (`locales.speak` chooses it). No other module of dicecup's is imported here, so the errors can
word themselves with it.
"""

from __future__ import annotations

import gettext
from contextvars import ContextVar
from typing import Any

__all__ = ["N_", "NP_", "Phrase", "SPOKEN", "_", "ngettext", "said"]

SPOKEN: ContextVar[gettext.NullTranslations | None] = ContextVar("dicecup_messages", default=None)
"""The compiled messages of the language spoken in this context (None: English, as written)."""


def N_(message: str) -> str:
    """`message` as written, marked for the catalogs: said later with `_` (help tables built at import)."""
    return message


def NP_(singular: str, plural: str) -> tuple[str, str]:
    """A message with a count `{n}`, marked for the catalogs: its singular and plural, said later (`Phrase`)."""
    return singular, plural


class Phrase(str):
    """An English message that keeps its template (marked with `N_` or `NP_`) and fields, so that a front end says
    it in the player's language (`said`) where it shows it: the engine's errors and progress labels stay English
    for programs (the API, logs, `--json`). `str()` of an exception made with one keeps the phrase."""

    template: str | tuple[str, str]
    fields: dict[str, Any]

    def __new__(cls, template: str | tuple[str, str], /, **fields: Any) -> Phrase:
        english = template if isinstance(template, str) else template[0 if fields.get("n") == 1 else 1]
        made = super().__new__(cls, english.format(**{k: str(v) for k, v in fields.items()}))
        made.template, made.fields = template, fields
        return made

    def __str__(self) -> str:
        return self

    def __reduce__(self) -> tuple[Any, ...]:  # (the English text alone would lose the template)
        return (_phrase, (self.template, self.fields))

    def said(self) -> str:
        """The phrase in the language spoken (`speak`), its fields said too."""
        fields = {k: said(v) if isinstance(v, str) else str(v) for k, v in self.fields.items()}
        if isinstance(self.template, str):
            return _(self.template).format(**fields)
        return ngettext(*self.template, int(self.fields["n"])).format(**fields)


def _phrase(template: str | tuple[str, str], fields: dict[str, Any]) -> Phrase:
    return Phrase(template, **fields)


def said(text: str) -> str:
    """`text` as a player reads it: a `Phrase` in the language spoken, any other text as it is."""
    return text.said() if isinstance(text, Phrase) else str.__str__(text)


def _(message: str) -> str:
    """`message` in the language spoken (`speak`), or as written."""
    spoken = SPOKEN.get()
    return message if spoken is None else spoken.gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The form of a message for `n` in the language spoken: Russian has three, English two."""
    spoken = SPOKEN.get()
    if spoken is None:
        return singular if n == 1 else plural
    return spoken.ngettext(singular, plural, n)
