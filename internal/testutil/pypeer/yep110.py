# The YEP-110 reference implementation, as printed in the YEP
# (shared/specs/yep-110.txt), with the names it leaves undefined bound to
# msgpack-python's own. Test scripts are appended to this file.
import sys

import msgpack
from msgpack import ExtType

packb_ = msgpack.packb
unpackb_ = msgpack.unpackb


class PackException(Exception):
    pass


class ArrayInterface:
    def __init__(self, array_interface):
        array_interface["shape"] = tuple(array_interface["shape"])
        self.__array_interface__ = array_interface


def pack_ndarray(ndarray):
    interface = ndarray.__array_interface__
    if "strides" in interface:
        if interface["strides"] is not None:
            raise PackException(
                "Strided array attempted to pack, please pack as C-Contiguous"
            )
        del interface["strides"]
    if "descr" in interface and len(interface["descr"]) == 1:
        del interface["descr"]
    interface["data"] = ndarray.tobytes()
    ser = packb_(interface)
    return ExtType(110, ser)


def ext_hook(code, data):
    if code == 110:
        interface = ArrayInterface(unpackb_(data))
        if "numpy" in sys.modules:
            import numpy as np

            return np.array(interface)
        return interface

    return ExtType(code, data)
