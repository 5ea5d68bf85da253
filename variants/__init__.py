"""The built-in variant files (data only; loaded by `dicecup.plugins.builtin_variants`)."""
