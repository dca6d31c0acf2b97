#!/usr/bin/env python3
"""Makes the package an app developer makes by following docs/embedding.md word for word:
its Package.swift is the guide's manifest (the URL pointed at URL), its main.swift the
DocC catalog's program (AvatarCacheLookup.docc/GettingStarted.md). Used by
scripts/bench-embedding and EmbeddingPackageTests, so that both build what the docs say.

Every ```swift block of docs/embedding.md and of the DocC catalog
(Sources/AvatarCacheLookup/AvatarCacheLookup.docc/*.md) says how it is compiled, in an HTML
comment on the line before it (neither GitHub nor DocC shows it):

  <!-- snippet: manifest -->    the app's Package.swift (one, in docs/embedding.md)
  <!-- snippet: app -->         the app's main.swift (one, in the catalog): built and run
  <!-- snippet: program -->     a whole main.swift, as written: an executable target of its own
  <!-- snippet: fragment -->    code shown without its imports: an executable target of its
                                own, its main.swift the block after `import AvatarCacheLookup`
                                and `import Foundation`
  <!-- snippet: dependency -->  a `.package(...)` line: the manifest with it in place of the
                                manifest's own is resolved (`<commit>` stands for a commit)

and `program` or `fragment` may add ` (excerpt of PATH)`: the block is also PATH's text as
it is (PATH is built and tested elsewhere, as Examples/lookup-route is). A block without a
marker, or with another one, is an error: no block is skipped.

With --snippets, each `program` and `fragment` block is also written as
Sources/<page>-<n>/main.swift (n: the block's place among the page's Swift blocks) and
added to the manifest as an executable target depending on AvatarCacheLookup alone; a
`#sourceLocation` line before it makes the compiler name the page and its line. Each
`dependency` block is written as dependencies/<page>-<n>/, a package whose manifest is the
guide's with that line in place of its own (the URL pointed at URL, `<commit>` at COMMIT).
With --revision COMMIT the app's manifest depends on that commit of URL instead of the
guide's version (for a repository with no release tag).

usage: embedding_package.py [--snippets] [--revision COMMIT] REPOSITORY_ROOT APP_DIRECTORY URL [COMMIT]
"""
import glob, os, re, sys

arguments = sys.argv[1:]
snippets = "--snippets" in arguments
if snippets: arguments.remove("--snippets")
revision = None
if "--revision" in arguments:
    at = arguments.index("--revision")
    revision = arguments[at + 1]
    del arguments[at:at + 2]
if len(arguments) not in (3, 4):
    sys.exit(__doc__.rsplit("\n\n", 1)[-1].strip())
root, app, url = arguments[:3]
commit = arguments[3] if len(arguments) == 4 else None

published = "https://github.com/avatar-cache/avatar-cache.git"
guide = "docs/embedding.md"
catalog = sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "Sources/AvatarCacheLookup/AvatarCacheLookup.docc/*.md")))
marker = re.compile(r"<!-- snippet: (manifest|app|program|fragment|dependency)(?: \(excerpt of ([^()\s]+)\))? -->")
problems = []

class Block:
    def __init__(self, page, number, line, kind, excerpt, code):
        self.page, self.number, self.line, self.kind, self.excerpt, self.code = page, number, line, kind, excerpt, code
        self.name = f"{os.path.splitext(os.path.basename(page))[0]}-{number}"

def blocks(page):
    """The page's Swift blocks, each with its marker."""
    lines = open(os.path.join(root, page), encoding="utf-8").read().split("\n")
    found, number, index = [], 0, 0
    while index < len(lines):
        if not re.fullmatch(r"```\s*swift\b.*", lines[index].strip(), re.I):
            index += 1
            continue
        number += 1
        end = index + 1
        while end < len(lines) and lines[end].strip() != "```": end += 1
        before = index - 1
        while before >= 0 and not lines[before].strip(): before -= 1
        said = marker.fullmatch(lines[before].strip()) if before >= 0 else None
        if not said:
            problems.append(f"{page}:{index + 1}: a Swift block without a `<!-- snippet: KIND -->` line before it (scripts/embedding_package.py lists the kinds)")
        elif said.group(2) and said.group(1) not in ("program", "fragment"):
            problems.append(f"{page}:{index + 1}: only a program or a fragment can be an excerpt")
        else:
            found.append(Block(page, number, index + 2, said.group(1), said.group(2), "\n".join(lines[index + 1:end]) + "\n"))
        index = end + 1
    return found

every = [block for page in [guide] + catalog for block in blocks(page)]
for block in every:
    if block.excerpt:
        path = os.path.join(root, block.excerpt)
        if not os.path.isfile(path):
            problems.append(f"{block.page}:{block.line}: an excerpt of {block.excerpt}, which is not there")
        elif block.code not in open(path, encoding="utf-8").read():
            problems.append(f"{block.page}:{block.line}: not an excerpt of {block.excerpt} as it is (the file changed, or the page)")

def one(kind, page):
    chosen = [block for block in every if block.kind == kind]
    if len(chosen) != 1 or chosen[0].page != page:
        problems.append(f"{kind}: {len(chosen)} blocks ({', '.join(b.page for b in chosen) or 'none'}); one is expected, in {page}")
        return None
    return chosen[0]

manifest_block = one("manifest", guide)
app_block = one("app", "Sources/AvatarCacheLookup/AvatarCacheLookup.docc/GettingStarted.md")
manifest = manifest_block.code if manifest_block else ""
dependency = re.compile(r"^( *)\.package\(url: \"" + re.escape(published) + r"\".*\),$", re.M)
if manifest_block and not dependency.search(manifest):
    problems.append(f"{guide}: the manifest has no `.package(url: \"{published}\", …),` line")
if problems:
    sys.exit("\n".join("embedding_package: " + p for p in problems))

def pointed(text):
    """`text` depending on URL, and on COMMIT for `<commit>`."""
    text = text.replace(published, url)
    return text.replace("<commit>", commit) if commit else text

def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as out: out.write(text)

if revision:
    version = re.search(r"from: \"[0-9.]+\"", manifest)
    if not version: sys.exit("embedding_package: the guide's manifest names no `from:` version")
    manifest = manifest.replace(version.group(0), f"revision: \"{revision}\"")
package = pointed(manifest)
built = [block for block in every if block.kind in ("program", "fragment")] if snippets else []
if built:
    package += ("\n// Every other Swift block of docs/embedding.md and the DocC catalog, an executable target\n"
                "// each (scripts/embedding_package.py --snippets).\npackage.targets += [\n")
    for block in built:
        package += f"    .executableTarget(name: \"{block.name}\", dependencies: [.product(name: \"AvatarCacheLookup\", package: \"avatar-cache\")]),\n"
    package += "]\n"
write(os.path.join(app, "Package.swift"), package)
write(os.path.join(app, "Sources", "app", "main.swift"), app_block.code)
for block in built:
    imports = "import AvatarCacheLookup\nimport Foundation\n" if block.kind == "fragment" else ""
    location = f"#sourceLocation(file: \"{block.page}\", line: {block.line})\n"
    write(os.path.join(app, "Sources", block.name, "main.swift"), imports + location + block.code)
if snippets:
    for block in every:
        if block.kind != "dependency": continue
        line = block.code.strip()
        if not line.startswith(".package(") or "\n" in line:
            sys.exit(f"embedding_package: {block.page}:{block.line}: a dependency block is one `.package(...)` line")
        if "<commit>" in line and not commit:
            sys.exit(f"embedding_package: {block.page}:{block.line} names <commit>: give COMMIT")
        place = os.path.join(app, "dependencies", block.name)
        line = line if line.endswith(",") else line + ","
        write(os.path.join(place, "Package.swift"), pointed(dependency.sub(lambda found: found.group(1) + line, manifest_block.code, count=1)))
        write(os.path.join(place, "Sources", "app", "main.swift"), app_block.code)
