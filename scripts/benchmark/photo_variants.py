"""Per-profile photo bytes: a copy of a photo that decodes to the same pixels but hashes
differently, so content de-duplication cannot hide a pipeline's cost. Used by
scripts/benchmark/corpus.py and scripts/make-corpus."""
import struct, zlib


def unique(data, ext, tag):
    """`data` with `tag` in a JPEG comment, PNG tEXt chunk, GIF comment, WebP chunk or HEIF free box."""
    ext = "jpg" if ext == "jpeg" else ext
    tag = tag.encode()
    if ext == "jpg":
        return data[:2] + b"\xff\xfe" + struct.pack(">H", len(tag) + 2) + tag + data[2:]
    if ext == "png":
        body = b"Comment\x00" + tag
        chunk = struct.pack(">I", len(body)) + b"tEXt" + body + struct.pack(">I", zlib.crc32(b"tEXt" + body) & 0xFFFFFFFF)
        return data[:33] + chunk + data[33:]
    if ext == "gif":
        flags = data[10]
        offset = 13 + (3 * (2 ** ((flags & 7) + 1)) if flags & 0x80 else 0)
        return data[:offset] + b"\x21\xfe" + bytes([len(tag)]) + tag + b"\x00" + data[offset:]
    if ext == "webp":
        payload = tag + (b" " if len(tag) % 2 else b"")
        body = data[8:] + b"ZTAG" + struct.pack("<I", len(payload)) + payload
        return b"RIFF" + struct.pack("<I", len(body)) + body
    if ext == "heic":
        return data + struct.pack(">I", len(tag) + 8) + b"free" + tag
    raise ValueError(ext)
