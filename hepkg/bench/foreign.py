"""Time inside Pyfhel for code that is not hepkg's (the papers' authors' scripts, run from a checkout).

:func:`timed_pyfhel` builds a Pyfhel context whose evaluation, encryption and decryption methods
add their seconds to ``.seconds`` (a Counter per method), their calls to ``.calls`` and the steps of
their rotations to ``.rotations`` (step -> count). Pyfhel's
ciphertext operators (``a * b``, ``a += b``, ``ct.decrypt()``) dispatch to these methods, so a
script that only holds the object is timed without a change to it. A method called from inside
another (``decrypt`` calling ``decryptInt``) is charged once, to the outer one.
"""
from __future__ import annotations

import time
from collections import Counter

__all__ = ["TIMED", "timed_pyfhel"]

#: The Pyfhel methods timed.
TIMED = ("encrypt", "decrypt", "encode", "multiply", "multiply_plain", "relinearize", "rotate", "add", "sub",
         "square", "mod_switch_to_next", "flip")


def _class():
    from Pyfhel import Pyfhel

    def timed(name):
        inner = getattr(Pyfhel, name)

        def method(self, *args, **kwargs):
            if self._busy:
                return inner(self, *args, **kwargs)
            self._busy = True
            start = time.perf_counter()
            try:
                return inner(self, *args, **kwargs)
            finally:
                self.seconds[name] += time.perf_counter() - start
                self.calls[name] += 1
                if name == "rotate":
                    self.rotations[int(kwargs.get("k", args[1] if len(args) > 1 else 0))] += 1
                self._busy = False
        method.__name__ = name
        return method

    def __init__(self):
        Pyfhel.__init__(self)
        self.seconds, self.calls, self.rotations, self._busy = Counter(), Counter(), Counter(), False

    return type("TimedPyfhel", (Pyfhel,), {"__init__": __init__, **{n: timed(n) for n in TIMED}})


def timed_pyfhel(**context):
    """A Pyfhel object with ``contextGen(**context)``, ``keyGen``, ``relinKeyGen`` and SEAL's default
    Galois keys (``rotateKeyGen()``: +-2^i and the row swap) done, its methods timed."""
    he = _class()()
    he.contextGen(**context)
    he.keyGen()
    he.relinKeyGen()
    he.rotateKeyGen()
    return he
