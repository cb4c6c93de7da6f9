#!/usr/bin/python3
"""Generate the ndpack conformance corpus.

Usage: /usr/bin/python3 conformance/generate.py OUT_DIR

Needs Debian's python3-numpy (1.24) and python3-msgpack (1.0.3). Writes, under
OUT_DIR, valid/ (arrays as numpy and the YEP-110 reference packer write
them), tolerated/ (unusual but valid encodings, each equal to a valid case),
negative/ (inputs every implementation must reject) and manifest.json. The
output depends only on this file and the two libraries: the random seed is
fixed, so CI regenerates it and compares byte for byte.
"""
import hashlib
import io
import json
import os
import struct
import sys
import warnings

import msgpack
import numpy as np
from numpy.lib import format as npf

# The YEP-110 reference code, shared with the Go interop tests.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "internal", "testutil", "pypeer"))
from yep110 import pack_ndarray  # noqa: E402

warnings.simplefilter("ignore")  # numpy warns when it picks format 2.0/3.0

OUT = sys.argv[1]
rng = np.random.default_rng(20260101)
manifest = {"numpy": np.__version__, "msgpack": ".".join(map(str, msgpack.version)),
            "valid": [], "tolerated": [], "negative": []}


def put(path, data):
    full = os.path.join(OUT, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "wb") as f:
        f.write(data)
    return {"path": path, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}


def npy_bytes(arr, version=None):
    buf = io.BytesIO()
    if version is None:
        np.save(buf, arr)
    else:
        npf.write_array(buf, arr, version=version)
    return buf.getvalue()


def ext_bytes(arr):
    return msgpack.packb(pack_ndarray(np.ascontiguousarray(arr)))


STANDARD = set("biufc")


def add_valid(name, arr, variants=True):
    arr = np.ascontiguousarray(arr)
    case = {"name": name, "typestr": arr.dtype.str, "shape": list(arr.shape),
            "standard": arr.dtype.kind in STANDARD, "files": []}

    def npy(tag, data, fortran, version):
        f = put("valid/%s%s.npy" % (name, tag), data)
        f.update({"format": "npy", "fortran_order": fortran, "version": version})
        case["files"].append(f)

    npy("", npy_bytes(arr), False, "1.0")
    if variants:
        if arr.ndim >= 2 and arr.size > 1:
            npy(".fortran", npy_bytes(np.asfortranarray(arr)), True, "1.0")
        npy(".v2", npy_bytes(arr, (2, 0)), False, "2.0")
        npy(".v3", npy_bytes(arr, (3, 0)), False, "3.0")
    f = put("valid/%s.ext" % name, ext_bytes(arr))
    f["format"] = "ext110"
    case["files"].append(f)
    manifest["valid"].append(case)


def random_array(typestr, shape):
    dt = np.dtype(typestr)
    n = int(np.prod(shape, dtype=np.int64))
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(dt).reshape(shape)
    return np.frombuffer(rng.bytes(n * dt.itemsize), dtype=dt).reshape(shape)


# Every standard kind and size, in both byte orders where order matters.
for kind in ["b1", "i1", "u1", "i2", "i4", "i8", "u2", "u4", "u8",
             "f2", "f4", "f8", "f16", "c8", "c16", "c32"]:
    orders = ["|"] if kind in ("b1", "i1", "u1") else ["<", ">"]
    for o in orders:
        tag = {"|": "", "<": "_le", ">": "_be"}[o]
        add_valid(kind + tag + "_2x3", random_array(o + kind, (2, 3)))

# Shapes: 0-d, empty, one element, >= 20 dimensions (32 is numpy's limit).
for name, shape in [("scalar", ()), ("empty", (0,)), ("one", (1,)), ("seven", (7,)),
                    ("3x4", (3, 4)), ("2x0x3", (2, 0, 3)), ("2x3x4", (2, 3, 4)),
                    ("20d", (2, 1, 1, 3, 1, 1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2)),
                    ("32d", (1,) * 30 + (2, 3))]:
    add_valid("f8_le_" + name, random_array("<f8", shape))
    add_valid("i2_be_" + name, random_array(">i2", shape), variants=name in ("scalar", "20d"))

# Payload sizes on both sides of the ext8/ext16/ext32 header boundaries.
def payload_len(n):
    return len(pack_ndarray(np.zeros(n, "|u1")).data)


for limit in (255, 65535):
    n = next(n for n in range(limit - 64, limit + 1) if payload_len(n) == limit)
    for k, side in ((n, "at"), (n + 1, "above")):
        add_valid("u1_payload_%s_%d" % (side, limit), random_array("|u1", (k,)), variants=False)

# Special floats, bit for bit: NaNs with payloads and signs, infinities,
# negative zero, subnormals, extremes.
SPECIAL_BITS = {
    "f2": ("<u2", [0x7E00, 0xFE00, 0x7E01, 0x7C01, 0x7C00, 0xFC00, 0x0000, 0x8000,
                   0x0001, 0x03FF, 0x0400, 0x7BFF, 0x3C00]),
    "f4": ("<u4", [0x7FC00000, 0xFFC00000, 0x7FC00001, 0x7F800001, 0x7F800000, 0xFF800000,
                   0x00000000, 0x80000000, 0x00000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0x3F800000]),
    "f8": ("<u8", [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF8DEAD0000BEEF, 0x7FF0000000000001,
                   0x7FF0000000000000, 0xFFF0000000000000, 0, 0x8000000000000000, 1,
                   0x000FFFFFFFFFFFFF, 0x0010000000000000, 0x7FEFFFFFFFFFFFFF, 0x3FF0000000000000]),
}
for kind, (utype, bits) in SPECIAL_BITS.items():
    arr = np.array(bits, dtype=utype).view("<" + kind)
    add_valid(kind + "_le_special", arr)
    add_valid(kind + "_be_special", arr.byteswap().view(">" + kind))
c = SPECIAL_BITS["f8"][1]
add_valid("c16_le_special", np.array(c[:12], dtype="<u8").view("<c16"))

# Kinds outside YEP-110's standard list: readers may accept them, writers
# must opt in to send them.
for name, typestr, shape in [("S5", "|S5", (2, 2)), ("U3_le", "<U3", (3,)), ("U3_be", ">U3", (3,)),
                             ("V4", "|V4", (2,)), ("M8ns_le", "<M8[ns]", (2, 2)), ("M8s_be", ">M8[s]", (3,)),
                             ("m8us_le", "<m8[us]", (3,)), ("M8_generic", "<M8", (2,))]:
    add_valid("nonstandard_" + name, random_array(typestr, shape), variants=False)


# ---- tolerated: unusual encodings every reader must accept --------------

BASE = np.arange(6, dtype="<u2").reshape(2, 3)
add_valid("u2_le_arange_2x3", BASE)


def tolerated(name, fmt, data, why, equals="u2_le_arange_2x3"):
    f = put("tolerated/%s.%s" % (name, "npy" if fmt == "npy" else "ext"), data)
    f.update({"name": name, "format": fmt, "why": why, "equals": equals})
    manifest["tolerated"].append(f)


def npy_raw(text, data=BASE.tobytes(), major=1):
    text = text.encode("latin1")
    if major == 1:
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text + data
    return b"\x93NUMPY" + bytes([major, 0]) + struct.pack("<I", len(text)) + text + data


def pad(text, align):
    n = len(text) + 1
    return text + " " * ((-(10 + n)) % align) + "\n"


tolerated("npy_align16", "npy", npy_raw(pad("{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3), }", 16)),
          "header padded to 16 bytes, as numpy before 1.14 wrote")
tolerated("npy_double_quotes", "npy", npy_raw(pad('{"descr": "<u2", "fortran_order": False, "shape": (2, 3)}', 64)),
          "double-quoted strings")
tolerated("npy_no_trailing_comma", "npy", npy_raw(pad("{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3)}", 64)),
          "no comma after the last item")
tolerated("npy_keys_reordered", "npy", npy_raw(pad("{'shape': (2, 3), 'fortran_order': False, 'descr': '<u2'}", 64)),
          "keys in another order")
tolerated("npy_pretty", "npy", npy_raw(pad("{'descr': '<u2',\n 'fortran_order': False,\n 'shape': (2, 3)}", 16)),
          "pretty-printed over several lines, as pprint wrote it")
tolerated("npy_no_padding", "npy", npy_raw("{'descr':'<u2','fortran_order':False,'shape':(2,3)}"),
          "no spaces, no padding, no newline")
tolerated("npy_long_suffix", "npy", npy_raw(pad("{'descr': '<u2', 'fortran_order': False, 'shape': (2L, 3L), }", 64)),
          "Python 2 long integers (2L), which numpy accepts in 1.0 and 2.0 headers")
tolerated("npy_fortran", "npy", npy_raw(pad("{'descr': '<u2', 'fortran_order': True, 'shape': (2, 3), }", 64),
                                        np.asfortranarray(BASE).tobytes(order="F")),
          "Fortran order: column-major data, read back row-major")

iface = {"data": BASE.tobytes(), "typestr": "<u2", "shape": [2, 3], "version": 3}


def ext(payload, header=None):
    n = len(payload)
    if header == "ext32":
        return b"\xc9" + struct.pack(">I", n) + b"\x6e" + payload
    return msgpack.packb(msgpack.ExtType(110, payload))


def mp_map_raw(items):
    out = bytes([0x80 | len(items)])
    for k, v in items:
        out += msgpack.packb(k) + v
    return out


P = msgpack.packb
tolerated("ext_keys_reordered", "ext110", ext(mp_map_raw([("version", P(3)), ("shape", P([2, 3])),
                                                          ("typestr", P("<u2")), ("data", P(BASE.tobytes()))])),
          "keys in another order than the reference packer's")
tolerated("ext_data_as_str", "ext110", ext(msgpack.packb(iface, use_bin_type=False)),
          "data as msgpack str, as msgpack-python with use_bin_type=False sends it")
tolerated("ext_extra_descr", "ext110", ext(mp_map_raw([("data", P(BASE.tobytes())), ("typestr", P("<u2")),
                                                       ("descr", P([["", "<u2"]])), ("shape", P([2, 3])),
                                                       ("version", P(3))])),
          "an extra descr key, which readers may ignore")
tolerated("ext_strides_nil", "ext110", ext(mp_map_raw([("data", P(BASE.tobytes())), ("strides", P(None)),
                                                       ("typestr", P("<u2")), ("shape", P([2, 3])),
                                                       ("version", P(3))])),
          "strides: nil, meaning C-contiguous")
tolerated("ext_wide_ints", "ext110", ext(mp_map_raw([("data", P(BASE.tobytes())), ("typestr", P("<u2")),
                                                     ("shape", b"\x92\xcf" + struct.pack(">Q", 2) + b"\xd3" + struct.pack(">q", 3)),
                                                     ("version", b"\xcd\x00\x03")])),
          "shape and version as 64-bit and 16-bit integers instead of fixints")
tolerated("ext_ext32_header", "ext110", ext(msgpack.packb(iface), header="ext32"),
          "an ext32 header on a payload that fits ext8")
tolerated("ext_version_2", "ext110", ext(mp_map_raw([("data", P(BASE.tobytes())), ("typestr", P("<u2")),
                                                     ("shape", P([2, 3])), ("version", P(2))])),
          "another interface version, which the YEP asks readers not to reject")


# ---- negative: inputs every implementation must reject ------------------

def negative(name, fmt, data, why, error):
    f = put("negative/%s.%s" % (name, "npy" if fmt == "npy" else "ext"), data)
    f.update({"name": name, "format": fmt, "why": why, "error": error})
    manifest["negative"].append(f)


good_npy = npy_bytes(BASE)
H = "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3), }"


def hdr(text, data=BASE.tobytes()):
    return npy_raw(pad(text, 64), data)


negative("npy_bad_magic", "npy", b"\x93NUMPZ" + good_npy[6:], "the magic string is not \\x93NUMPY", "not-npy")
negative("npy_version_4", "npy", good_npy[:6] + b"\x04\x00" + good_npy[8:], "format version 4.0 does not exist", "version")
negative("npy_version_1_1", "npy", good_npy[:6] + b"\x01\x01" + good_npy[8:], "format version 1.1 does not exist", "version")
negative("npy_empty", "npy", b"", "an empty file", "truncated")
negative("npy_truncated_magic", "npy", good_npy[:5], "the file ends inside the magic string", "truncated")
negative("npy_truncated_header", "npy", good_npy[:40], "the file ends inside the header", "truncated")
negative("npy_truncated_data", "npy", good_npy[:-1], "the data is one byte shorter than shape x itemsize", "truncated")
negative("npy_header_too_large", "npy", npy_raw("{" + " " * 10010 + "}", major=2),
         "a header over numpy's default limit of 10000 bytes", "header-too-large")
negative("npy_not_a_dict", "npy", hdr("[('descr', '<u2')]"), "the header is a list, not a dict", "header")
negative("npy_not_literal", "npy", hdr("{'descr': dtype('<u2'), 'fortran_order': False, 'shape': (2, 3)}"),
         "the header calls a function (never evaluate it)", "header")
negative("npy_missing_key", "npy", hdr("{'descr': '<u2', 'shape': (2, 3)}"), "fortran_order is missing", "header")
negative("npy_extra_key", "npy", hdr("{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3), 'x': 1}"),
         "a key other than descr, fortran_order and shape", "header")
negative("npy_fortran_not_bool", "npy", hdr("{'descr': '<u2', 'fortran_order': 0, 'shape': (2, 3)}"),
         "fortran_order is an int, not a bool", "header")
negative("npy_shape_list", "npy", hdr("{'descr': '<u2', 'fortran_order': False, 'shape': [2, 3]}"),
         "shape is a list, not a tuple", "header")
negative("npy_shape_float", "npy", hdr("{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3.0)}"),
         "a dimension is a float", "header")
negative("npy_shape_str", "npy", hdr("{'descr': '<u2', 'fortran_order': False, 'shape': (2, '3')}"),
         "a dimension is a str", "header")
negative("npy_negative_dim", "npy", hdr("{'descr': '<u2', 'fortran_order': False, 'shape': (-2, -3)}"),
         "negative dimensions (numpy 1.24 does not check; (-2, -3) multiplies to 6)", "shape")
negative("npy_count_overflow", "npy", hdr("{'descr': '<u2', 'fortran_order': False, 'shape': (4294967296, 4294967296)}"),
         "the element count overflows 64 bits", "shape")
negative("npy_bytes_overflow", "npy", hdr("{'descr': '<u2', 'fortran_order': False, 'shape': (4611686018427387904,)}"),
         "the byte count overflows 64 bits", "shape")
negative("npy_huge_claim", "npy", (lambda b: b + b"\0" * (200 - len(b)))(
    npy_raw(pad("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000000), }", 64), b"")),
    "10^12 elements announced by a 200-byte file: fail without allocating", "truncated")
negative("npy_33_dims", "npy", hdr("{'descr': '<u2', 'fortran_order': False, 'shape': (%s)}" % ("1, " * 33), b"\0\0"),
         "33 dimensions: numpy refuses more than 32", "shape")
negative("npy_overflow_beside_zero", "npy", hdr("{'descr': '<u2', 'fortran_order': False, 'shape': (9223372036854775807, 0)}", b""),
         "(2**63-1, 0): numpy refuses it ('array is too big'), though a 0 makes the element count 0", "shape")
negative("npy_unknown_descr", "npy", hdr("{'descr': '<q2', 'fortran_order': False, 'shape': (2, 3)}"),
         "an unknown type code", "dtype")
negative("npy_bad_size", "npy", hdr("{'descr': '<f3', 'fortran_order': False, 'shape': (2, 3)}"),
         "a float of 3 bytes", "dtype")
negative("npy_structured_duplicate_field", "npy", hdr("{'descr': [('a', '<u2'), ('a', '<u2')], 'fortran_order': False, 'shape': (3,)}"),
         "a record dtype naming a field twice: numpy refuses it ('field 'a' occurs more than once')", "dtype")
negative("npy_object", "npy", hdr("{'descr': '|O', 'fortran_order': False, 'shape': (2,)}", b"\x80\x04N."),
         "Python objects: the data is a pickle, never to be loaded", "unsupported")

good_ext = ext_bytes(BASE)


def ext_map(items):
    return ext(mp_map_raw(items))


D = ("data", P(BASE.tobytes()))
T = ("typestr", P("<u2"))
S = ("shape", P([2, 3]))
V = ("version", P(3))
negative("ext_other_code", "ext110", msgpack.packb(msgpack.ExtType(111, msgpack.packb(iface))),
         "ext type 111, not 110", "not-ext110")
negative("ext_not_ext", "ext110", msgpack.packb(iface), "a plain map, not an ext object", "not-ext110")
negative("ext_payload_not_map", "ext110", ext(msgpack.packb([1, 2, 3])), "the payload is an array, not a map", "malformed")
negative("ext_missing_shape", "ext110", ext_map([D, T, V]), "no shape", "malformed")
negative("ext_missing_typestr", "ext110", ext_map([D, S, V]), "no typestr", "malformed")
negative("ext_missing_data", "ext110", ext_map([T, S, V]), "no data", "malformed")
negative("ext_data_short", "ext110", ext_map([("data", P(BASE.tobytes()[:-1])), T, S, V]),
         "data one byte shorter than shape x itemsize (numpy would accept it)", "data-length")
negative("ext_data_long", "ext110", ext_map([("data", P(BASE.tobytes() + b"\0\0")), T, S, V]),
         "data longer than shape x itemsize (numpy would accept it)", "data-length")
negative("ext_strides", "ext110", ext_map([D, ("strides", P([2, 6])), T, S, V]),
         "non-nil strides: the data is not C-contiguous", "strided")
negative("ext_left_over", "ext110", ext(msgpack.packb(iface) + b"\xc0"),
         "a byte left over inside the ext payload after the map", "malformed")
negative("ext_trailing", "ext110", good_ext + b"\xc0", "a byte after the ext object in a one-object file", "malformed")
negative("ext_truncated", "ext110", good_ext[:-1], "the object is one byte short", "truncated")
negative("ext_truncated_header", "ext110", good_ext[:2], "the file ends inside the ext header", "truncated")
negative("ext_huge_claim", "ext110", b"\xc9\xff\xff\xff\xff\x6e\x84\xa4data\xc6\xff\xff\xff\xf0\x00\x00\x00",
         "a 20-byte file whose headers claim 4 GiB: fail without allocating", "truncated")
negative("ext_negative_dim", "ext110", ext_map([("data", P(b"")), T, ("shape", P([-2, -3])), V]),
         "negative dimensions", "shape")
negative("ext_count_overflow", "ext110", ext_map([("data", P(b"")), T, ("shape", P([2**32, 2**32])), V]),
         "the element count overflows 64 bits", "shape")
negative("ext_unknown_typestr", "ext110", ext_map([D, ("typestr", P("<q2")), S, V]), "an unknown type code", "dtype")
negative("ext_typestr_no_order", "ext110", ext_map([D, ("typestr", P("u2")), S, V]),
         "a typestr without its byte order", "dtype")
negative("ext_shape_float", "ext110", ext_map([D, T, ("shape", P([2.0, 3])), V]), "a float dimension", "malformed")
negative("ext_duplicate_key", "ext110", ext_map([D, T, S, S, V]), "the shape key twice", "malformed")
negative("ext_data_is_ext", "ext110",
         bytes.fromhex("c72d6e84a464617461d7010000000000000000a774797065737472a33c6638a573686170659101a776657273696f6e03"),
         "data is an ext value (fixext 8 of type 1), not bin or str. The reference ext_hook segfaults on these 48 "
         "bytes: msgpack-python hands numpy an ExtType, a tuple, which numpy takes as (address, read-only)", "malformed")
negative("ext_offset", "ext110", ext_map([D, ("offset", P(2)), T, S, V]),
         "a non-zero offset: the reference reads the array from data+offset; only nil or 0 describe data as it is",
         "offset")
negative("ext_33_dims", "ext110", ext_map([("data", P(b"\0\0")), T, ("shape", P([1] * 33)), V]),
         "33 dimensions: numpy holds at most 32", "shape")
negative("ext_overflow_beside_zero", "ext110", ext_map([("data", P(b"")), T, ("shape", P([2**63 - 1, 0])), V]),
         "(2**63-1, 0): numpy refuses shapes whose non-zero dimensions times the item size overflow, even with a 0", "shape")

for k in ("valid", "tolerated", "negative"):
    manifest[k].sort(key=lambda c: c["name"])
with open(os.path.join(OUT, "manifest.json"), "w") as f:
    json.dump(manifest, f, indent=1, sort_keys=True)
    f.write("\n")
