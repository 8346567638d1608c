"""Typed, immutable views of Kubernetes values and objects, built from plain manifests.

Everything here is pure: parsing and validation of quantities, resource vectors and the objects every
autoscaler and the simulator share.
"""

from kubetide.model.errors import FieldError, ManifestError
from kubetide.model.quantity import Quantity, QuantityError, parse_quantity
from kubetide.model.resources import Resources

__all__ = ["FieldError", "ManifestError", "Quantity", "QuantityError", "Resources", "parse_quantity"]
