#!/usr/bin/env python3
"""Writes the Hessian fuzzer's seed corpus (corpus_hessian/, checked in). Run from tests/fuzz/.

Each seed is a control byte (bits 0-3: maxDepth - 1, bits 4-7: maxElements / 4; see
hessian_fuzz.cpp) then Hessian 2.0 bytes, one or more values.
"""
import os

SEEDS = {
    # Java's bytes for a Point{label "a", x 1, y 2L, next = itself}.
    "object_self": "430850726f626524507494056c6162656c01780179046e65787460016191e25190",
    # [HashMap{1:2}, the same map, int[]{1}, int[]{2}, new LinkedList()] (type refs, a ref).
    "shared_list": "7d4891925a519171045b696e749171909270146a6176612e7574696c2e4c696e6b65644c697374",
    "enum_list": "73075b6f626a656374430b50726f626524436f6c6f7291046e616d65"
                 "60035245446005475245454e5191",
    "scalars": "4e5446" "90bfc000d7ffff497fffffff" "e0d8f7f73c08005980000000" "4c0000000080000000"
               "5b5c5dff5e80005f000001f4447ff8000000000000" "4b000000014a0000000000000001",
    "strings": "00" "01c3a9" "02eda0bdedb880" "520001eda0bd01edb880" "3004" + "61" * 1028,
    "bytes": "20" "2fffffffffffffffffffffffffffffffff" "410002abcd" "3401ee",
    "variable_lists": "57" "91" "92" "5a" "55045b696e74" "91" "5a",
    "typed_map": "4d176a6176612e7574696c2e4c696e6b6564486173684d61704e91e201785a",
    "object_by_O": "430161904f90",
    "bad_surrogate": "01eda0bd",
    "four_byte_utf8": "01f09f9880",
    "deep": "79" * 40 + "4e",
    "ref_to_nothing": "7a5190" "5195",
    "huge_length": "58497fffffff",
    "class_defs": "430161" "90" * 1 + "430162" "90" + "430163" "90" + "61",
}

os.makedirs("corpus_hessian", exist_ok=True)
for name, hexbytes in SEEDS.items():
    with open(os.path.join("corpus_hessian", name), "wb") as f:
        f.write(bytes([0x3f]) + bytes.fromhex(hexbytes))
print(f"wrote {len(SEEDS)} seeds")
