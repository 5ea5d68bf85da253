"""Which language a player reads: the languages dicecup speaks, and the choice from a flag or the environment.

A `--lang` flag wins; otherwise the first language of `LANGUAGE`, `LC_ALL`, `LC_MESSAGES` or `LANG` (the
order gettext reads them in) that dicecup speaks; otherwise English. `ru_RU.UTF-8` and `ru` are the same.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from .errors import DicecupError

__all__ = ["DEFAULT", "LANGUAGES", "choose", "normalise"]

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
            raise DicecupError(f"--lang: dicecup does not speak {requested!r}; choose one of: {known}")
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
