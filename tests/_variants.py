"""The bundled variants the tests run over, by family."""

#: The first bundled variants (Yahtzee, Yatzy, Yacht, Generala, the Russian games; see docs/games/).
BUILTIN_VARIANTS = ("yahtzee", "yatzy", "yacht", "generala", "russian", "kniffel", "russian-simple")


#: The rest of the family, bundled too.
FAMILY_VARIANTS = ("maxi-yatzy", "triple-yahtzee", "yamb", "kismet", "balut", "yatzy-forced")
