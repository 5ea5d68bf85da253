"""The interactive terminal game: seats, typed commands, the turn loop, the view and save files."""
