# A stand-in for gr00t.data.utils.to_json_serializable: dataclasses as
# dicts of their fields in order, enumerations by name, arrays as lists.
from dataclasses import fields, is_dataclass
from enum import Enum

import numpy as np


def to_json_serializable(obj):
    if is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_json_serializable(getattr(obj, f.name)) for f in fields(obj)}
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, dict):
        return {k: to_json_serializable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set)):
        return [to_json_serializable(v) for v in obj]
    if isinstance(obj, Enum):
        return obj.name
    return obj
