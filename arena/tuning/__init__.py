"""SPSA tuning of a bot's spin options by playing games (``arena tune``): see docs/TUNING.md."""
