#!/usr/bin/env python3
"""Writes the decoder fuzzer's seed corpus (corpus/, checked in). Run from tests/fuzz/.

Each seed is: control byte 0 (bit 7: small limit = bits 0-6), control byte 1 (bits 0-2: cuts,
bits 3-7: stop after N frames), 2 bytes per cut, then a stream (see decoder_fuzz.cpp).
"""
import os
import struct


def frame(flags, status, fid, body):
    return struct.pack(">HBBQI", 0xDABB, flags, status, fid, len(body)) + body


def seed(stream, limit=None, cuts=(), stop=0):
    head = bytes([0x80 | limit if limit is not None else 0, (stop << 3) | len(cuts)])
    return head + b"".join(struct.pack(">H", c) for c in cuts) + stream


PING = frame(0xE2, 0, 1, b"N")
PONG = frame(0x22, 20, 1, b"N")
APP = frame(0xC2, 0, 0x0102030405060708, b"hello dubbo")
RESP = frame(0x02, 20, 0x0102030405060708, bytes(range(40)))
EMPTY = frame(0x82, 0, 0, b"")
MAXID = frame(0x06, 70, 2**64 - 1, b"\xda\xbb" * 5)

SEEDS = {
    "heartbeats": seed(PING + PONG),
    "merged_split": seed(PING + APP + RESP + EMPTY + PONG + MAXID, cuts=(5, 30, 31, 100)),
    "split_in_header": seed(APP + RESP, cuts=(3, 15, 16)),
    "stop_after_two": seed(PING + APP + PONG + RESP, cuts=(20,), stop=2),
    "limit_exact": seed(frame(0x82, 0, 3, b"x" * 16) + PING, limit=16, cuts=(10,)),
    "limit_plus_one": seed(PING + frame(0x82, 0, 3, b"x" * 17), limit=16, cuts=(20,)),
    "default_limit_header": seed(PING + struct.pack(">HBBQI", 0xDABB, 0x82, 0, 4, 8 * 2**20 + 1)),
    "huge_length": seed(struct.pack(">HBBQI", 0xDABB, 0x82, 0, 4, 2**32 - 1), limit=127),
    "bad_magic_first": seed(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
    "bad_magic_after": seed(PING + APP + b"\x12\x34" + PING, cuts=(40,)),
    "truncated_header": seed(PING + PING[:5]),
    "truncated_body": seed(APP + RESP[:30], cuts=(12,)),
    "empty_stream": seed(b""),
}

os.makedirs("corpus", exist_ok=True)
for name, data in SEEDS.items():
    with open(os.path.join("corpus", name), "wb") as f:
        f.write(data)
print(f"wrote {len(SEEDS)} seeds")
