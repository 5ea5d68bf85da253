"""The variant language: YAML with locations, the compiler, the frozen model, hooks and the engine.

This layer knows nothing of games in progress: it turns variant files and
plugins into compiled `Variant` objects whose methods score rolls on cards.
"""
