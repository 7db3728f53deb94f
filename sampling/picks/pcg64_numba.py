"""NumPy's PCG64 generator in numba, with jump-ahead: the compiled pick loop's random stream.

Every active pick draws one tie-break per candidate pair (4,950 doubles at 100 models, 44,850
at 300), but reads one only when two pairs' scores are exactly equal. The pick loop
(:mod:`sampling.picks.picker_numba`) therefore keeps the generator's state itself, as four
``uint64`` words (:func:`state_words`), moves it past a pick's tie-breaks in ``O(log n)``
(:func:`advance`) and computes a tie-break only when one is read (:func:`draw_at`): the same
numbers, in the same order and number, as ``Generator.random`` of the
:class:`numpy.random.PCG64` it came from (tested draw for draw), and the same state after.

The generator is PCG-XSL-RR 128/64: a 128-bit linear congruential state
``s <- s * MULT + inc`` (mod 2^128) and the output ``rotr64(hi ^ lo, hi >> 58)``; a double is
the output's top 53 bits times 2^-53 (numpy's ``next_double``).
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

__all__ = ["advance", "draw_at", "next_double", "set_state_words", "state_words"]

_MULT_HI = np.uint64(0x2360ED051FC65DA4)  # PCG's default 128-bit multiplier
_MULT_LO = np.uint64(0x4385DF649FCCF645)
_MASK = (1 << 64) - 1


def state_words(bit_generator: np.random.PCG64) -> np.ndarray:
    """The 128-bit state and increment of ``bit_generator`` as ``uint64`` words
    ``[state_hi, state_lo, inc_hi, inc_lo]``."""
    s = bit_generator.state["state"]
    return np.array([s["state"] >> 64, s["state"] & _MASK, s["inc"] >> 64, s["inc"] & _MASK],
                    dtype=np.uint64)  # fmt: skip


def set_state_words(bit_generator: np.random.PCG64, words: np.ndarray) -> None:
    """Move ``bit_generator`` to the state ``words`` (:func:`state_words`; its buffered 32-bit
    half, unused by doubles, is kept)."""
    state = bit_generator.state
    state["state"]["state"] = (int(words[0]) << 64) | int(words[1])
    bit_generator.state = state


@intrinsic
def _mul_wide(typingctx, a, b):
    """The 128-bit product of two ``uint64`` as ``(high, low)`` words (LLVM's i128)."""
    sig = types.UniTuple(types.uint64, 2)(types.uint64, types.uint64)

    def codegen(context, builder, signature, args):
        wide = ir.IntType(128)
        p = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
        lo = builder.trunc(p, ir.IntType(64))
        hi = builder.trunc(builder.lshr(p, ir.Constant(wide, 64)), ir.IntType(64))
        return context.make_tuple(builder, signature.return_type, (hi, lo))

    return sig, codegen


@numba.njit(cache=True, inline="always")
def _mul(ah, al, bh, bl):
    """128-bit product mod 2^128 of ``(ah, al)`` and ``(bh, bl)`` (high, low words)."""
    hi, lo = _mul_wide(al, bl)
    return hi + al * bh + ah * bl, lo


@numba.njit(cache=True, inline="always")
def _add(ah, al, bh, bl):
    """128-bit sum mod 2^128."""
    lo = al + bl
    return ah + bh + np.uint64(lo < al), lo


@numba.njit(cache=True)
def next_double(st):
    """The next ``Generator.random()`` of the state ``st`` (advanced in place)."""
    hi, lo = _mul(st[0], st[1], _MULT_HI, _MULT_LO)
    hi, lo = _add(hi, lo, st[2], st[3])
    st[0], st[1] = hi, lo
    x = hi ^ lo
    rot = hi >> np.uint64(58)
    out = (x >> rot) | (x << ((np.uint64(64) - rot) & np.uint64(63)))
    return np.float64(out >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@numba.njit(cache=True)
def advance(st, delta):
    """Move the state ``st`` ``delta`` draws ahead in place, in ``O(log delta)`` (Brown's
    jump-ahead of a linear congruential generator, as ``PCG64.advance``)."""
    cm_h, cm_l = _MULT_HI, _MULT_LO
    cp_h, cp_l = st[2], st[3]
    am_h, am_l = np.uint64(0), np.uint64(1)
    ap_h, ap_l = np.uint64(0), np.uint64(0)
    d = np.uint64(delta)
    while d > 0:
        if d & np.uint64(1):
            am_h, am_l = _mul(am_h, am_l, cm_h, cm_l)
            ap_h, ap_l = _mul(ap_h, ap_l, cm_h, cm_l)
            ap_h, ap_l = _add(ap_h, ap_l, cp_h, cp_l)
        t_h, t_l = _add(cm_h, cm_l, np.uint64(0), np.uint64(1))
        cp_h, cp_l = _mul(t_h, t_l, cp_h, cp_l)
        cm_h, cm_l = _mul(cm_h, cm_l, cm_h, cm_l)
        d >>= np.uint64(1)
    h, lo = _mul(am_h, am_l, st[0], st[1])
    st[0], st[1] = _add(h, lo, ap_h, ap_l)


@numba.njit(cache=True)
def draw_at(start, p, scratch):
    """The ``p``-th draw (from 0) after the state ``start`` (left as it is; ``scratch``: four
    ``uint64`` words)."""
    scratch[:] = start
    advance(scratch, p)
    return next_double(scratch)
