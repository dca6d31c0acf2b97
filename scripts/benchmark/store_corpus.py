#!/usr/bin/env python3
"""Builds the store corpus for scripts/bench-scale: an N-profile NexusAI users export in
which no profile has a photo (monograms only), so nothing but the store grows with N:
the cache index, the plan and the lookups. Names vary so that initials and palette
colours spread as they would (a few thousand distinct monograms).

usage: store_corpus.py WORKDIR N
"""
import json, os, sys

work, count = sys.argv[1], int(sys.argv[2])
os.makedirs(work, exist_ok=True)
path = os.path.join(work, f"store-{count}.json")
if not os.path.exists(path):
    first = ["Ann", "Bo", "Chen", "Dara", "Émile", "Farah", "Gus", "Hana", "Ivo", "Jun", "Kofi", "Lía", "Mina", "Noor",
             "Olu", "Priya", "Quinn", "Rosa", "Sven", "Tariq", "Uma", "Vik", "Wen", "Xóchitl", "Yuki", "Zoë", "Łukasz", "Ömer"]
    last = ["Lee", "Okafor", "Silva", "Nguyen", "Kowalski", "Haddad", "Tanaka", "Müller", "Rossi", "Kim", "Abebe", "Bauer",
            "Castro", "Dubois", "Eriksson", "Fischer", "García", "Hughes", "Iyer", "Jansen", "Kaur", "Larsen", "Moreau",
            "Novak", "Ortiz", "Petrov", "Quispe", "Ramos", "Sato", "Torres", "Ueda", "Vargas", "Weber", "Xu", "Yilmaz", "Zhang"]
    with open(path + ".tmp", "w") as out:
        out.write('{"users": [\n')
        for i in range(count):
            user = {"id": f"user-{i:07d}", "displayName": f"{first[i % len(first)]} {last[(i // len(first)) % len(last)]}",
                    "email": f"user{i}@example.com"}
            out.write(("," if i else "") + json.dumps(user, ensure_ascii=False) + "\n")
        out.write("]}\n")
    os.rename(path + ".tmp", path)
print(f"store corpus: {count} profiles without photos: {path}", file=sys.stderr)
