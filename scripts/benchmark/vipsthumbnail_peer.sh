#!/usr/bin/env bash
# The shell peer: curl each photo, then vipsthumbnail it twice (900 and 330 px, centre
# crop, metadata stripped), two photos at a time (xargs -P 2).
#   usage: vipsthumbnail_peer.sh EXPORT OUT_DIR
set -euo pipefail
export OUT=$2
mkdir -p "$OUT"
python3 -c 'import json,sys
seen=set()
for u in json.load(open(sys.argv[1]))["users"]:
    url=u.get("profileImageUrl")
    if url and url not in seen:
        seen.add(url); print(url)' "$1" |
xargs -P 2 -I{} sh -c '
  name=$(basename "{}"); src="$OUT/$name.src"
  curl -sf --max-time 30 -o "$src" "{}" &&
  vipsthumbnail "$src" --size 900x900 --smartcrop centre --export-profile srgb -o "$OUT/$name-900.jpg[Q=82,strip]" &&
  vipsthumbnail "$src" --size 330x330 --smartcrop centre --export-profile srgb -o "$OUT/$name-330.jpg[Q=82,strip]";
  rm -f "$src"' || true
