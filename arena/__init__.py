"""Morris Arena: a referee and tournament runner for Nine Men's Morris bots and its variants."""

from arena.rules import BLACK, WHITE, Move, Outcome, Position, Termination
from arena.variants import PRESETS, Variant, get_variant

__version__ = "0.1.0"
__all__ = ["BLACK", "WHITE", "Move", "Outcome", "Position", "Termination", "PRESETS", "Variant",
           "get_variant", "__version__"]
