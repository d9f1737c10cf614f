#!/usr/bin/env python3
"""trim_jfr.py - makes a small fuzz seed of a real JFR recording.

A recording's metadata event describes every type the JVM knows, labels
and descriptions included: about 97 KB, most of a small recording, and
reading it took most of fuzz_jfr's time on such a seed (tests/fuzz/
README.md).  This rewrites each chunk with a metadata event that keeps only
the types its events and constant pools use (and the types their fields
name, transitively), their fields, and the Timestamp/Timespan annotations;
labels, descriptions and settings go.  Events and pool entries are copied
byte for byte; checkpoints get their new delta, the header its new sizes
and offsets.  The JDK's `jfr print` reads the result as it reads the
original (tested by hand when the seed was made; see the README).

Usage: python3 tests/fuzz/trim_jfr.py IN.jfr OUT.jfr
Only for recordings with compressed integers (every JDK recording).
"""
import struct
import sys


def varint(data, pos):
    r = 0
    for i in range(9):
        b = data[pos + i]
        if i == 8:
            return r | b << 56, pos + 9
        r |= (b & 0x7F) << (7 * i)
        if not b & 0x80:
            return r, pos + i + 1
    raise ValueError("varint")


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def enc_varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    for _ in range(8):
        if v < 0x80:
            out.append(v)
            return bytes(out)
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def padded4(v):
    return bytes([(v & 0x7F) | 0x80, (v >> 7 & 0x7F) | 0x80, (v >> 14 & 0x7F) | 0x80, v >> 21 & 0x7F])


def read_string(data, pos):
    enc = data[pos]
    pos += 1
    if enc in (0, 1):
        return ("" if enc == 1 else None), pos
    n, pos = varint(data, pos)
    if enc in (3, 5):
        s = data[pos:pos + n].decode("utf-8" if enc == 3 else "latin-1")
        return s, pos + n
    if enc == 4:
        cs = []
        for _ in range(n):
            c, pos = varint(data, pos)
            cs.append(c)
        return "".join(chr(c) for c in cs), pos
    raise ValueError("string encoding %d" % enc)


def read_meta(data, pos):
    """The metadata event at pos: (header fields, strings, root element)."""
    _size, pos = varint(data, pos)
    fields = []
    for _ in range(4):  # type, start, duration, metadata id
        v, pos = varint(data, pos)
        fields.append(v)
    n, pos = varint(data, pos)
    strs = []
    for _ in range(n):
        s, pos = read_string(data, pos)
        strs.append(s)

    def element(pos):
        name, pos = varint(data, pos)
        na, pos = varint(data, pos)
        attrs = []
        for _ in range(na):
            k, pos = varint(data, pos)
            v, pos = varint(data, pos)
            attrs.append((strs[k], strs[v]))
        nk, pos = varint(data, pos)
        kids = []
        for _ in range(nk):
            kid, pos = element(pos)
            kids.append(kid)
        return (strs[name], attrs, kids), pos

    root, _ = element(pos)
    return fields, root


def attr(el, key):
    for k, v in el[1]:
        if k == key:
            return v
    return None


def trim_meta(root, used_ids):
    metadata = [k for k in root[2] if k[0] == "metadata"][0]
    classes = {int(attr(c, "id")): c for c in metadata[2] if c[0] == "class"}
    by_name = {attr(c, "name"): i for i, c in classes.items()}
    keep_ann = {by_name.get("jdk.jfr.Timestamp"), by_name.get("jdk.jfr.Timespan")} - {None}
    need = set(i for i in used_ids if i in classes) | keep_ann | {by_name["java.lang.String"]}
    todo = list(need)
    while todo:
        c = classes[todo.pop()]
        for f in c[2]:
            if f[0] == "field":
                t = int(attr(f, "class"))
                if t not in need:
                    need.add(t)
                    todo.append(t)
    kept = []
    for i, c in classes.items():
        if i not in need:
            continue
        fields = []
        for f in c[2]:
            if f[0] != "field":
                continue
            anns = [a for a in f[2] if a[0] == "annotation" and int(attr(a, "class")) in keep_ann]
            fields.append((f[0], f[1], anns))
        kept.append((c[0], c[1], fields))
    region = [k for k in root[2] if k[0] == "region"]
    return (root[0], root[1], [(metadata[0], metadata[1], kept)] + region)


def write_meta(fields, root):
    strs, index = [], {}

    def sidx(s):
        if s not in index:
            index[s] = len(strs)
            strs.append(s)
        return index[s]

    def element(el):
        out = bytearray(enc_varint(sidx(el[0])) + enc_varint(len(el[1])))
        for k, v in el[1]:
            out += enc_varint(sidx(k)) + enc_varint(sidx(v))
        out += enc_varint(len(el[2]))
        for kid in el[2]:
            out += element(kid)
        return bytes(out)

    tree = element(root)
    body = bytearray()
    for v in fields:
        body += enc_varint(v)
    body += enc_varint(len(strs))
    for s in strs:
        b = s.encode("utf-8")
        body += b"\x03" + enc_varint(len(b)) + b
    body += tree
    return padded4(len(body) + 4) + bytes(body)


def used_types(data, start, end):
    """Type ids of the chunk's events."""
    ids, pos = set(), start + 68
    while pos < end:
        size, p = varint(data, pos)
        t, p = varint(data, p)
        if t > 1:
            ids.add(t)
        pos += size
    return ids


def chunk_used(data, start):
    """The types a chunk's events and pools use; the chunk's end."""
    size, md = struct.unpack(">q8xq", data[start + 8:start + 32])
    end = start + size
    _, root = read_meta(data, start + md)
    return used_types(data, start, end) | all_pool_types(data, start, end, root), end


def trim_chunk(data, start, used):
    """The chunk at start with a metadata event of the used types only.
    The types are those of every chunk: the JDK's reader keeps a chunk's
    metadata for the next when their metadata ids are equal, and reads
    the next chunk's pools with it."""
    hdr = data[start:start + 68]
    size, cp, md = struct.unpack(">qqq", hdr[8:32])
    end = start + size
    fields, root = read_meta(data, start + md)
    new_meta = write_meta(fields, trim_meta(root, used))
    out = bytearray(hdr)
    old_to_new = {}
    pos = start + 68
    while pos < end:
        esize, p = varint(data, pos)
        t, p = varint(data, p)
        new_pos = len(out)
        old_to_new[pos - start] = new_pos
        if t == 0:
            out += new_meta
        elif t == 1:
            ts, p = varint(data, p)
            dur, p = varint(data, p)
            delta, p = varint(data, p)
            delta = signed(delta)
            rest = data[p:pos + esize]
            nd = 0 if delta == 0 else old_to_new[pos - start + delta] - new_pos
            body = enc_varint(1) + enc_varint(ts) + enc_varint(dur) + enc_varint(nd) + rest
            out += padded4(len(body) + 4) + body
        else:
            out += data[pos:pos + esize]
        pos += esize
    struct.pack_into(">qqq", out, 8, len(out), old_to_new[cp], old_to_new[md])
    return bytes(out), end


def all_pool_types(data, start, end, root):
    """Type ids of the chunk's constant pools: the checkpoints' pools are
    walked entry by entry, each value skipped per the full metadata."""
    metadata = [k for k in root[2] if k[0] == "metadata"][0]
    classes = {int(attr(c, "id")): c for c in metadata[2] if c[0] == "class"}
    prims = {"boolean", "byte"}

    def skip_value(t, pos, depth=0):
        c = classes[t]
        name = attr(c, "name")
        if name in prims:
            return pos + 1
        if name in ("float",):
            return pos + 4
        if name in ("double",):
            return pos + 8
        if name in ("short", "char", "int", "long"):
            return varint(data, pos)[1]
        if name == "java.lang.String":
            enc = data[pos]
            if enc == 2:
                return varint(data, pos + 1)[1]
            return read_string(data, pos)[1]
        for f in c[2]:
            if f[0] != "field":
                continue
            ft = int(attr(f, "class"))
            if attr(f, "dimension") == "1":
                n, pos = varint(data, pos)
                for _ in range(n):
                    pos = skip_field(f, ft, pos, depth)
            else:
                pos = skip_field(f, ft, pos, depth)
        return pos

    def skip_field(f, ft, pos, depth):
        if attr(f, "constantPool") == "true":
            return varint(data, pos)[1]
        return skip_value(ft, pos, depth + 1)

    types, pos = set(), start + 68
    while pos < end:
        esize, p = varint(data, pos)
        t, p = varint(data, p)
        if t == 1:
            for _ in range(3):
                _, p = varint(data, p)
            p += 1
            npools, p = varint(data, p)
            for _ in range(npools):
                pt, p = varint(data, p)
                types.add(pt)
                n, p = varint(data, p)
                for _ in range(n):
                    _, p = varint(data, p)
                    p = skip_value(pt, p)
        pos += esize
    return types


def main():
    data = open(sys.argv[1], "rb").read()
    used, pos = set(), 0
    while pos < len(data):
        u, pos = chunk_used(data, pos)
        used |= u
    out, pos = bytearray(), 0
    while pos < len(data):
        chunk, pos = trim_chunk(data, pos, used)
        out += chunk
    open(sys.argv[2], "wb").write(bytes(out))
    print("%s: %d bytes -> %s: %d bytes" % (sys.argv[1], len(data), sys.argv[2], len(out)))


if __name__ == "__main__":
    main()
