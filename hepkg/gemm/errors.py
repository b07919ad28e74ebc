"""Exceptions of the gemm section; each message names the limit that was hit."""
from hepkg.he.errors import HEError


class GemmError(HEError, ValueError):
    """Base class of the gemm errors."""


class ShapeMismatch(GemmError):
    """The operands are not matrices, or their inner dimensions differ."""


class PlaintextRangeError(GemmError):
    """An entry is not an integer, or does not fit the plaintext modulus t."""


class ProductOverflow(GemmError):
    """The true integer product leaves (-t/2, t/2]: BFV would return it only mod t."""


class ProductOverflowWarning(UserWarning):
    """Issued instead of :class:`ProductOverflow` with ``on_overflow='warn'``."""


class ShapeTooLarge(GemmError):
    """A layout of the method needs more slots than one ciphertext row holds (use blocking)."""


class NotApplicable(GemmError):
    """The method does not apply to this shape (E2DM-R's shape condition)."""
