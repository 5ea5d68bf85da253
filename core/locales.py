"""Which language a player reads: the languages dicecup speaks, the choice from a flag or the environment, and
the messages in it (gettext catalogs, read through Babel).

A `--lang` flag wins; otherwise the first language of `LANGUAGE`, `LC_ALL`, `LC_MESSAGES` or `LANG` (the
order gettext reads them in) that dicecup speaks; otherwise English. `ru_RU.UTF-8` and `ru` are the same.
"""

from __future__ import annotations

import gettext
import io
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .errors import DicecupError
from .phrases import N_, NP_, SPOKEN, Phrase, _, ngettext, said

__all__ = [
    "Catalogs",
    "DEFAULT",
    "DOMAIN",
    "LANGUAGES",
    "N_",
    "NP_",
    "Phrase",
    "_",
    "catalog_json",
    "catalog_path",
    "choose",
    "messages",
    "ngettext",
    "normalise",
    "said",
    "speak",
]

#: The languages dicecup speaks, by code, each named in itself.
LANGUAGES = {"en": "English", "ru": "Русский", "de": "Deutsch", "es": "Español", "sv": "Svenska"}
DEFAULT = "en"

_ENVIRONMENT = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")


def normalise(text: str) -> str:
    """The language code of a locale name: `ru_RU.UTF-8@euro` -> `ru`, `pt-BR` -> `pt`."""
    return text.split(".")[0].split("@")[0].replace("_", "-").split("-")[0].strip().lower()


def choose(requested: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """The language to speak: `requested` (a `--lang` value) when given, which must be one dicecup speaks;
    else the environment's first such language; else English."""
    if requested is not None:
        code = normalise(requested)
        if code not in LANGUAGES:
            known = ", ".join(f"{c} ({name})" for c, name in LANGUAGES.items())
            raise DicecupError(
                Phrase(
                    N_("--lang: dicecup does not speak {lang}; choose one of: {known}"),
                    lang=repr(requested),
                    known=known,
                )
            )
        return code
    env = os.environ if environ is None else environ
    for var in _ENVIRONMENT:
        value = env.get(var, "")
        if not value:
            continue
        for part in value.split(":"):  # LANGUAGE lists several, in order of preference
            code = normalise(part)
            if code in LANGUAGES:
                return code
        if var != "LANGUAGE":  # the first of LC_ALL, LC_MESSAGES, LANG that is set decides (C, POSIX: English)
            return DEFAULT
    return DEFAULT


# ---------------------------------------------------------------------------- the messages players read

#: The gettext domain of dicecup's messages: catalogs are `locale/LANG/LC_MESSAGES/dicecup.po` in the package.
DOMAIN = "dicecup"


def catalog_path(lang: str) -> Path:
    """Where the catalog of language `lang` lives in the package (the source `.po`, read by Babel)."""
    return Path(__file__).with_name("locale") / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


def messages(lang: str) -> gettext.NullTranslations:
    """The messages of language `lang`: its catalog compiled in memory (English, or no catalog: as written)."""
    if lang == DEFAULT or not catalog_path(lang).is_file():
        return gettext.NullTranslations()
    from babel.messages.mofile import write_mo

    compiled = io.BytesIO()
    write_mo(compiled, _catalog(lang), use_fuzzy=False)
    compiled.seek(0)
    return gettext.GNUTranslations(compiled)


def _catalog(lang: str) -> Any:
    """The catalog of `lang` as Babel reads it (`babel.messages.Catalog`)."""
    from babel.messages.pofile import read_po

    with catalog_path(lang).open("rb") as f:
        return read_po(f, locale=lang, domain=DOMAIN)


def speak(lang: str) -> Callable[[], None]:
    """Speak `lang` from now on in this context (a command line, a thread): `_` and `ngettext` read it.
    Returns what puts back the language spoken before."""
    token = SPOKEN.set(messages(lang))
    return lambda: SPOKEN.reset(token)


def catalog_json(lang: str) -> dict[str, object]:
    """The catalog of `lang` for a browser: each message (English, as the code writes it) with its translation
    (a list of forms for a count), and the form each CLDR plural category takes (`Intl.PluralRules` names
    the category). English has no messages: the page's own text is English."""
    if lang not in LANGUAGES:
        raise DicecupError(f"no language {lang!r}; languages: {', '.join(LANGUAGES)}")
    spoken = messages(lang)
    found: dict[str, object] = {}
    plural: dict[str, int] = {"one": 0, "other": 1}
    if lang != DEFAULT:
        from babel import Locale

        for entry in _catalog(lang):
            if entry.id and not entry.fuzzy:
                key = str(entry.id[0] if isinstance(entry.id, tuple | list) else entry.id)
                found[key] = list(entry.string) if isinstance(entry.string, tuple) else entry.string
        rules, form = Locale.parse(lang).plural_form, getattr(spoken, "plural", None)
        if form is not None:  # which catalog form each category of counts takes
            plural = {}
            for n in (*range(200), 1_000_000):
                plural.setdefault(rules(n), form(n))
            plural.setdefault("other", max(plural.values()))  # fractions: not counted in whole dice
    return {"language": lang, "plural": plural, "messages": found}


class Catalogs:
    """Each language's compiled messages, read once: for a program that speaks to several players in their own
    languages at once (the server), where `speak` would read a catalog for every message."""

    def __init__(self) -> None:
        self._compiled: dict[str, gettext.NullTranslations] = {}  # at most one a language dicecup speaks

    def messages(self, lang: str) -> gettext.NullTranslations:
        """`messages(lang)`, kept (a language dicecup does not speak: English)."""
        code = lang if lang in LANGUAGES else DEFAULT
        got = self._compiled.get(code)
        if got is None:
            got = self._compiled[code] = messages(code)
        return got

    @contextmanager
    def speaking(self, lang: str) -> Iterator[None]:
        """Speak `lang` inside the block, then the language spoken before."""
        token = SPOKEN.set(self.messages(lang))
        try:
            yield
        finally:
            SPOKEN.reset(token)
