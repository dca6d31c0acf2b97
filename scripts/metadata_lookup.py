#!/usr/bin/env python3
"""What `avatar-cache lookup --json` answers, from a cache's metadata.json alone (schema 4,
docs/cache-format.md), with Python's standard library: the reader an app or a script
without avatar-cache's library writes, and the tests hold it to `lookup`'s answers for every
user of a warm (MetadataReaderTests). It records no access (a lookup through the index does).

  usage: scripts/metadata_lookup.py CACHE (--user ID | --url URL | --all) [--size PT] [--scale N]

--all prints one object, user id -> answer, for every user. Exit 66 when the user or URL is
not in the document, 73 when the document cannot be read or is older than schema 4.
"""
import argparse
import json
import math
import os
import sys

NOT_IN_CACHE, UNUSABLE = 66, 73


def load(cache):
    """The document, or exit 73 saying why not."""
    path = os.path.join(cache, "metadata.json")
    try:
        with open(path, encoding="utf-8") as file:
            document = json.load(file)
    except (OSError, ValueError) as error:
        print(f"metadata_lookup: {path}: {error}", file=sys.stderr)
        sys.exit(UNUSABLE)
    if not isinstance(document, dict) or not isinstance(document.get("users"), dict):
        version = document.get("schemaVersion") if isinstance(document, dict) else None
        print(f"metadata_lookup: {path}: schema version {version}: no users before schema 4", file=sys.stderr)
        sys.exit(UNUSABLE)
    return document


def tier(points, scale, available, smallest_decode=110):
    """The apps' decode rule: a view of `points` needs max(points × 2, smallest_decode)
    points × scale pixels, smallest_decode being the smallest of the document's
    `decodeSizes` (110 without them); the smallest tier at least that large, else the
    largest there is."""
    needed = math.ceil(max(points * 2, smallest_decode) * scale)
    tiers = sorted(available)
    if not tiers:
        return None
    return next((t for t in tiers if t >= needed), tiers[-1])


def answer(document, root, user_id, user, points, scale, source=None):
    """The answer for `user` (a value of `users`), as `lookup` gives it. `source`: the URL
    asked (a lookup by URL shows that photo's entry)."""
    kind = "photo" if source else user["kind"] if user else "photo"
    key = source or (user or {}).get("entry")
    entry = document["entries"].get(key) if key else None
    result = {"kind": kind}
    if user_id is not None:
        result["userId"] = user_id
    if user:
        result.update(color=user["color"], textColor=user["textColor"], initials=user["initials"],
                      displayName=user.get("displayName", ""))
        if "glyph" in user:
            result["glyph"] = user["glyph"]
    photo = key if kind == "photo" else user.get("photo")
    if source or (photo and photo.startswith("http")):
        result["url"] = source or photo
    if entry is not None and entry["kind"] == "photo":
        if "placeholder" in entry:
            result["placeholder"] = entry["placeholder"]
    elif user:
        result["placeholder"] = {"color": user["color"]}
    if entry is not None:
        sizes = [s for s in document.get("decodeSizes") or [] if isinstance(s, int) and s > 0]
        chosen = tier(points, scale, [int(t) for t in entry["files"]], min(sizes) if sizes else 110)
        if chosen is not None:
            file = entry["files"][str(chosen)]
            result.update(tier=chosen, side=file["width"], file=os.path.join(root, file["filename"]))
    return result


def owner(document, url):
    """The first user (by id) whose photo is `url`."""
    for user_id in sorted(document["users"], key=lambda text: text.encode("utf-8")):
        user = document["users"][user_id]
        if (user.get("entry") if user["kind"] == "photo" else user.get("photo")) == url:
            return user_id, user
    return None, None


def main():
    parser = argparse.ArgumentParser(description="Answer as `avatar-cache lookup --json`, from metadata.json alone.")
    parser.add_argument("cache")
    asked = parser.add_mutually_exclusive_group(required=True)
    asked.add_argument("--user")
    asked.add_argument("--url")
    asked.add_argument("--all", action="store_true")
    parser.add_argument("--size", type=float, default=55)
    parser.add_argument("--scale", type=float, default=3)
    arguments = parser.parse_args()
    if not 0 < arguments.size <= 100000 or not 0.5 <= arguments.scale <= 8:
        parser.error("--size must be above 0 and at most 100000 points, --scale from 0.5 to 8 pixels per point")
    document = load(arguments.cache)
    root = os.path.abspath(arguments.cache)
    size, scale = arguments.size, arguments.scale
    if arguments.all:
        result = {user_id: answer(document, root, user_id, user, size, scale) for user_id, user in document["users"].items()}
    elif arguments.user is not None:
        user = document["users"].get(arguments.user)
        if user is None:
            print(f'metadata_lookup: user "{arguments.user}" is not in the cache', file=sys.stderr)
            return NOT_IN_CACHE
        result = answer(document, root, arguments.user, user, size, scale)
    else:
        if arguments.url not in document["entries"]:
            print(f"metadata_lookup: URL {arguments.url} is not in the cache", file=sys.stderr)
            return NOT_IN_CACHE
        user_id, user = owner(document, arguments.url)
        result = answer(document, root, user_id, user, size, scale, source=arguments.url)
    print(json.dumps(result, indent=2, sort_keys=True, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
