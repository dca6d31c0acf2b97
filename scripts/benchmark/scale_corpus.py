#!/usr/bin/env python3
"""Builds the scale corpus for scripts/bench-scale: an N-profile export in which every
profile has its own small photo (a 96 px JPEG derived from scikit-image's astronaut, with
a per-profile comment so every photo is distinct content: N cache entries), served from
WORKDIR/www/tiny. Small photos keep the first (warming) run short; the figures measured
on this corpus are the re-run and the prune, which never decode.

usage: scale_corpus.py WORKDIR N BASE_URL
"""
import json, os, subprocess, sys

from photo_variants import unique

work, count, base_url = sys.argv[1], int(sys.argv[2]), sys.argv[3].rstrip("/")
tiny = os.path.join(work, "www", "tiny")
os.makedirs(tiny, exist_ok=True)
base = os.path.abspath(os.path.join(work, "tiny-base.jpg"))
if not os.path.exists(base):
    source = os.path.join(work, "skimage-data", "astronaut.png")
    subprocess.run(["vipsthumbnail", source, "--size", "96x96", "-o", base + "[Q=85,strip]"], check=True)
original = open(base, "rb").read()
first = ["Ann", "Bo", "Chen", "Dara", "Émile", "Farah", "Gus", "Hana", "Ivo", "Jun", "Kofi", "Lía", "Mina", "Noor"]
last = ["Lee", "Okafor", "Silva", "Nguyen", "Kowalski", "Haddad", "Tanaka", "Müller", "Rossi", "Kim"]
users = []
for i in range(count):
    user = {"id": f"user-{i:07d}", "displayName": f"{first[i % 14]} {last[(i // 3) % 10]}", "email": f"user{i}@example.com"}
    name = f"t{i:07d}.jpg"
    path = os.path.join(tiny, name)
    if not os.path.exists(path):
        with open(path, "wb") as out:
            out.write(unique(original, "jpg", f"avatar-cache scale profile {i}"))
    user["profileImageUrl"] = f"{base_url}/tiny/{name}"
    users.append(user)
with open(os.path.join(work, f"scale-{count}.json"), "w") as out:
    json.dump({"users": users}, out, ensure_ascii=False)
print(f"scale corpus: {count} profiles, {sum(1 for u in users if 'profileImageUrl' in u)} photos", file=sys.stderr)
