# A stand-in for gr00t.data.types, for running GR00T's server_client.py
# unmodified in package gr00t's live tests: ModalityConfig and the action
# config it parses, with the fields and enumeration names GR00T has.
from dataclasses import dataclass
from enum import Enum


class ActionRepresentation(Enum):
    RELATIVE = "relative"
    DELTA = "delta"
    ABSOLUTE = "absolute"


class ActionType(Enum):
    EEF = "eef"
    NON_EEF = "non_eef"


class ActionFormat(Enum):
    DEFAULT = "default"
    XYZ_ROT6D = "xyz+rot6d"
    XYZ_ROTVEC = "xyz+rotvec"


@dataclass
class ActionConfig:
    rep: ActionRepresentation
    type: ActionType
    format: ActionFormat
    state_key: str | None = None


@dataclass
class ModalityConfig:
    delta_indices: list
    modality_keys: list
    sin_cos_embedding_keys: list | None = None
    mean_std_embedding_keys: list | None = None
    action_configs: list | None = None

    def __post_init__(self):
        if self.action_configs is not None:
            self.action_configs = [
                ActionConfig(
                    rep=ActionRepresentation[a["rep"]],
                    type=ActionType[a["type"]],
                    format=ActionFormat[a["format"]],
                    state_key=a.get("state_key"),
                )
                if isinstance(a, dict)
                else a
                for a in self.action_configs
            ]
