#!/usr/bin/env python3
"""Writes the Dubbo body fuzzer's seed corpus (corpus_dubbo/, checked in). Run from tests/fuzz/.

Each seed is a control byte (bits 0-1: 0 request, 1 result, 2 error message, 3 all; bits 2-7:
maxArguments and maxAttachments - 1; see dubbo_body_fuzz.cpp) then a body.
"""
import os


def s(text):
    """A Hessian compact string (0..31 ASCII characters)."""
    return bytes([len(text)]) + text.encode()


THROWABLE = (b"C" + s("java.lang.RuntimeException") + b"\x94" + s("detailMessage") + s("cause")
             + s("stackTrace") + s("suppressedExceptions") + b"\x60" + s("boom") + b"\x51\x90"
             + b"\x70" + s("[java.lang.StackTraceElement") + b"\x78")
HEAD = s("2.0.2") + s("org.example.Greeter") + b"N" + s("sayHello")

SEEDS = {
    "request": b"\x3c" + HEAD + s("Ljava/lang/String;") + s("world") + b"H" + s("path")
               + s("org.example.Greeter") + b"Z",
    "request_typed": b"\x3c" + HEAD + s("I[BJLjava/util/Map;") + b"\x91\x22\xca\xfe\xe5HZ"
                     + b"H" + s("k") + s("v") + b"Z",
    "request_no_attachments": b"\x3c" + HEAD + s("Ljava/lang/String;") + s("x"),
    "request_bad_descriptor": b"\x3c" + HEAD + s("Ljava/lang/String") + s("x") + b"HZ",
    "request_int_key": b"\x3c" + HEAD + s("") + b"H\x91" + s("v") + b"Z",
    "result_value": b"\x3d" + b"\x94" + s("hello") + b"H" + s("dubbo") + s("2.0.2") + b"Z",
    "result_old": b"\x3d\x91" + s("hello"),
    "result_null": b"\x3d\x92",
    "result_exception": b"\x3d\x90" + THROWABLE,
    "result_exception_attachments": b"\x3d\x93" + THROWABLE + b"HZ",
    "error": b"\x3e" + s("Not found exported service"),
    "all_null": b"\x3fN",
}


def main():
    os.makedirs("corpus_dubbo", exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join("corpus_dubbo", name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
