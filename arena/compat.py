"""cutechess-cli's and fastchess's spellings, mapped onto Morris Arena's own settings.

Engine authors come with command lines from cutechess-cli and fastchess; where an option
means the same here, its spelling is accepted and translated to the setting it means, in
this one module (the rest of the code knows only its own names).  Where a spelling has no
Morris meaning the caller says so.  The table is docs/TOURNAMENTS.md's, *For engine
authors*.

Adjudication (``-draw`` / ``-resign`` in cutechess, ``--draw`` / ``--resign`` here):

=====================  ==================  ==============================================
cutechess / fastchess  Morris Arena         meaning (the same in both)
=====================  ==================  ==============================================
draw ``movenumber=N``  draw ``after_turn``  from move number N on (plies / 2)
draw ``movecount=M``   draw ``turns``       both scores within ±S for M moves each
draw ``score=S``       draw ``score``       in the engine's own units (cutechess: cp)
resign ``movecount``   resign ``turns``     a side at -S or below for M of its moves
resign ``score``       resign ``score``
resign ``twosided``    resign ``twosided``  the winner's score must agree
=====================  ==================  ==============================================
"""

from __future__ import annotations

from typing import Any, Mapping

#: per rule, cutechess's and fastchess's key -> this project's key
ADJUDICATION_KEYS: dict[str, dict[str, str]] = {
    "draw": {"movenumber": "after_turn", "movecount": "turns", "score": "score"},
    "resign": {"movecount": "turns", "score": "score", "twosided": "twosided"},
}


def adjudication_tokens(rule: str, tokens: Mapping[str, Any]) -> dict[str, Any]:
    """``tokens`` of a ``draw`` or ``resign`` rule with cutechess's keys translated to this
    project's (its own keys, and keys it does not know, are left as they are: the rule's
    parser names what is wrong)."""
    names = ADJUDICATION_KEYS.get(rule, {})
    out: dict[str, Any] = {}
    for key, value in tokens.items():
        out[names.get(key, key)] = value
    return out


__all__ = ["ADJUDICATION_KEYS", "adjudication_tokens"]
