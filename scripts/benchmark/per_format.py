#!/usr/bin/env python3
"""Per-format exports for scripts/bench: N profiles of one kind of photo each, from the
benchmark's base photos (scripts/benchmark/corpus.py must have run), every profile with
its own bytes (scripts/benchmark/photo_variants.py), served under /formats/<kind>/.
Adds two HEIC bases the mix lacks (3 MP and 12 MP, as phones write them, from the
grainy phone photos), and a "monogram" export of N profiles without a photo, each with
its own initials and colour.

Prints one JSON object: kind -> {"label", "export", "photos": [paths]}.

usage: per_format.py WORKDIR N BASE_URL
"""
import json, os, subprocess, sys

from photo_variants import unique

work, count, base_url = sys.argv[1], int(sys.argv[2]), sys.argv[3].rstrip("/")
bases = os.path.join(work, "bases")
extra = os.path.join(work, "bases-formats")
os.makedirs(extra, exist_ok=True)

# corpus.py's phone photos, by index: 3, 4 and 9 progressive, 8 CMYK, the rest baseline
# (5 and 6 carry EXIF orientation 6).
phone = sorted(n for n in os.listdir(bases) if n.startswith("phone-"))
kinds = {
    "jpeg-small": ("JPEG, small (96-400 px)", sorted(n for n in os.listdir(bases) if n.startswith("small-"))),
    "jpeg-phone": ("JPEG, phone (3-12 MP), baseline", [phone[i] for i in (0, 1, 2, 5, 6, 7)]),
    "jpeg-progressive": ("JPEG, phone, progressive", [phone[i] for i in (3, 4, 9)]),
    "jpeg-cmyk": ("JPEG, phone, CMYK with ICC profile", [phone[8]]),
    "png": ("PNG (600-800 px)", ["other-00.png", "other-04.png"]),
    "webp": ("WebP (900-1200 px)", ["other-01.webp", "other-05.webp"]),
    "heic": ("HEIC (1.3, 3 and 12 MP)", ["other-02.heic", "extra:heic-3mp.heic", "extra:heic-12mp.heic"]),
    "gif": ("GIF (400 px)", ["other-03.gif"]),
}


def base_path(name):
    return os.path.join(extra, name[6:]) if name.startswith("extra:") else os.path.join(bases, name)


# HEIC as a phone writes it: 4:2:0, from the grainy 3 and 12 MP baseline photos.
for name, source in (("heic-3mp.heic", phone[0]), ("heic-12mp.heic", phone[2])):
    out = os.path.join(extra, name)
    if not os.path.exists(out):
        subprocess.run(["vips", "copy", os.path.join(bases, source), out + "[Q=50,compression=hevc,subsample_mode=on]"],
                       check=True, stdout=subprocess.DEVNULL)

result = {}
for kind, (label, names) in kinds.items():
    folder = os.path.join(work, "www", "formats", kind)
    os.makedirs(folder, exist_ok=True)
    originals = {n: open(base_path(n), "rb").read() for n in names}
    users, paths = [], []
    for i in range(count):
        name = names[i % len(names)]
        ext = name.rsplit(".", 1)[1]
        file = f"p{i:05d}.{ext}"
        path = os.path.join(folder, file)
        if not os.path.exists(path):
            open(path, "wb").write(unique(originals[name], ext, f"avatar-cache bench {kind} {i}"))
        users.append({"id": f"{kind}-{i:05d}", "displayName": f"User {i}", "profileImageUrl": f"{base_url}/formats/{kind}/{file}"})
        paths.append(path)
    export = os.path.join(work, f"format-{kind}-{count}.json")
    json.dump({"users": users}, open(export, "w"))
    result[kind] = {"label": label, "export": export, "photos": paths}

# Profiles without a photo: every one its own initials (two letters) and colour.
letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
users = [{"id": f"monogram-{i:05d}", "displayName": f"{letters[i % 26]}x {letters[(i // 26) % 26]}y"} for i in range(count)]
export = os.path.join(work, f"format-monogram-{count}.json")
json.dump({"users": users}, open(export, "w"))
result["monogram"] = {"label": "no photo: monogram (PNG)", "export": export, "photos": []}
print(json.dumps(result))
