#!/usr/bin/env python3
"""Makes the package an app developer makes by following docs/embedding.md word for word:
its Package.swift is the guide's manifest (the URL pointed at URL), its main.swift the
DocC catalog's first example (AvatarCacheLookup.docc/GettingStarted.md). Used by
scripts/bench-embedding and EmbeddingPackageTests, so that both build what the docs say.

usage: embedding_package.py REPOSITORY_ROOT APP_DIRECTORY URL
"""
import os, re, sys

root, app, url = sys.argv[1], sys.argv[2], sys.argv[3]

def first_block(path, starting):
    text = open(os.path.join(root, path), encoding="utf-8").read()
    for block in re.findall(r"```swift\n(.*?)\n```", text, re.S):
        if block.startswith(starting):
            return block + "\n"
    sys.exit(f"embedding_package: {path} has no Swift block starting with {starting!r}")

manifest = first_block("docs/embedding.md", "// swift-tools-version")
published = "https://github.com/avatar-cache/avatar-cache.git"
if published not in manifest:
    sys.exit(f"embedding_package: the guide's manifest does not name {published}")
program = first_block("Sources/AvatarCacheLookup/AvatarCacheLookup.docc/GettingStarted.md", "import AvatarCacheLookup")
os.makedirs(os.path.join(app, "Sources", "app"), exist_ok=True)
with open(os.path.join(app, "Package.swift"), "w", encoding="utf-8") as out:
    out.write(manifest.replace(published, url))
with open(os.path.join(app, "Sources", "app", "main.swift"), "w", encoding="utf-8") as out:
    out.write(program)
