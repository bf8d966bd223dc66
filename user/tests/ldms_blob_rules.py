#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check a blob file set against what LDMS's reader ldms-csv-from-blobs needs.

Usage: ldms_blob_rules.py [-n MESSAGES] DAT-FILE...

ldms-csv-from-blobs is not in Debian's archive or on npm, so this checks the
rules shared/formats.md (section 3) gives for it, as LDMS's reader applies
them, plus what our writer promises on top:

 1. DAT, OFFSET, TYPE and (if present) TIMING each start with their magic,
    read as a little-endian u64 ("blobdat\\0", "bloboff\\0", "blobtyp\\0",
    "blobtim\\0").
 2. TIMING is 8 bytes plus 16 per message (size = 8 mod 16); every entry is
    LE u64 seconds, LE u64 microseconds below 1000000.
 3. DAT after its magic, split on NUL bytes, gives exactly as many messages
    as OFFSET has entries (LDMS uses only the count), and as many as TYPE
    and TIMING have entries; DAT ends with the NUL of its last message.
 4. Every message is ASCII text (ldms-csv-from-blobs fails on the first
    byte >= 0x80) and one flat JSON object, each key once, whose values are
    scalars: no object, list or null, and no string containing ',' (LDMS
    rejects such a message).
 5. TYPE is 'j' for every message.
 6. Our writer's own promise, which LDMS does not read: OFFSET entry i is
    the byte offset of message i in DAT, the first at 8 (offsets restart at
    8 in every rolled file set).
 7. With -n, the file sets hold that many messages together.

Prints one line per file set; exits 1 with the first rule broken.
"""
import json
import os
import struct
import sys


def fail(msg):
    print("ldms_blob_rules: %s" % msg, file=sys.stderr)
    sys.exit(1)


def sibling(dat, ext):
    d, base = os.path.split(dat)
    if ".DAT." not in base:
        fail("%s is not a DAT file" % dat)
    return os.path.join(d, base.replace(".DAT.", ".%s." % ext, 1))


def load(path, magic, required=True):
    if not os.path.exists(path):
        if required:
            fail("%s: missing" % path)
        return None
    with open(path, "rb") as f:
        b = f.read()
    # rule 1: the magic as LDMS reads it, one LE u64
    if len(b) < 8 or struct.unpack("<Q", b[:8])[0] != \
            struct.unpack("<Q", magic)[0]:
        fail("%s: magic %r, expected %r" % (path, b[:8], magic))
    return b


def check_set(dat_path):
    dat = load(dat_path, b"blobdat\0")
    off = load(sibling(dat_path, "OFFSET"), b"bloboff\0")
    typ = load(sibling(dat_path, "TYPE"), b"blobtyp\0")
    tim = load(sibling(dat_path, "TIMING"), b"blobtim\0", required=False)

    if (len(off) - 8) % 8:
        fail("OFFSET: %d bytes, not 8 + 8n" % len(off))
    n = (len(off) - 8) // 8
    # rule 3: LDMS splits DAT on NUL and pairs the pieces with OFFSET's count
    body = dat[8:]
    if n and not body.endswith(b"\0"):
        fail("DAT does not end with a NUL")
    msgs = body.split(b"\0")[:-1] if body else []
    if len(msgs) != n:
        fail("DAT has %d NUL-terminated messages, OFFSET %d entries"
             % (len(msgs), n))
    if len(typ) - 8 != n:
        fail("TYPE has %d entries, OFFSET %d" % (len(typ) - 8, n))
    if tim is not None:
        # rule 2
        if len(tim) % 16 != 8:
            fail("TIMING: %d bytes, not 8 mod 16" % len(tim))
        if (len(tim) - 8) // 16 != n:
            fail("TIMING has %d entries, OFFSET %d"
                 % ((len(tim) - 8) // 16, n))
    at = 8
    for i, m in enumerate(msgs):
        # rule 6
        o = struct.unpack_from("<Q", off, 8 + 8 * i)[0]
        if o != at:
            fail("OFFSET entry %d is %d, message %d starts at %d"
                 % (i, o, i, at))
        at += len(m) + 1
        # rule 5
        if typ[8 + i:9 + i] != b"j":
            fail("TYPE entry %d is %r, not 'j'" % (i, typ[8 + i:9 + i]))
        if tim is not None:
            sec, usec = struct.unpack_from("<QQ", tim, 8 + 16 * i)
            if usec >= 1000000:
                fail("TIMING entry %d: %d microseconds" % (i, usec))
        # rule 4
        # ldms-csv-from-blobs fails on the first byte >= 0x80: ASCII only
        def no_dup(pairs):
            keys = [k for k, _ in pairs]
            if len(keys) != len(set(keys)):
                raise ValueError("a key given twice")
            return dict(pairs)
        try:
            obj = json.loads(m.decode("ascii"), object_pairs_hook=no_dup)
        except (UnicodeDecodeError, ValueError) as e:
            fail("message %d is not JSON text (%s): %r" % (i, e, m[:200]))
        if not isinstance(obj, dict):
            fail("message %d is not an object: %r" % (i, m[:200]))
        for k, v in obj.items():
            if isinstance(v, (dict, list)) or v is None:
                fail("message %d: %s is not a scalar" % (i, k))
            if isinstance(v, str) and "," in v:
                fail("message %d: %s has a ','" % (i, k))
    print("# %s: %d messages keep LDMS's reader rules" % (dat_path, n))
    return n


def main():
    args = sys.argv[1:]
    want = None
    if args[:1] == ["-n"]:
        want = int(args[1])
        args = args[2:]
    if not args:
        fail("usage: ldms_blob_rules.py [-n MESSAGES] DAT-FILE...")
    total = sum(check_set(a) for a in args)
    # rule 7
    if want is not None and total != want:
        fail("%d messages, expected %d" % (total, want))


main()
