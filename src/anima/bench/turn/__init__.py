"""End of turn: the turn-taking set and how soon each detector ends a turn."""
