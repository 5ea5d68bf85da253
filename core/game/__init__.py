"""The game: immutable states with explicit chance, actions, saving, and bots that need no tables."""
