@testable import AvatarCacheLookup
@testable import AvatarCachePipeline
@testable import AvatarCacheSupport
import AvatarCacheTestKit
import AvatarCacheTestSupport
import Foundation
import Testing

/// An app developer following docs/embedding.md word for word: this repository, tagged as
/// the release its version names, in a git repository of its own; a new package whose
/// manifest is the guide's and whose main.swift is the DocC catalog's program
/// (scripts/embedding_package.py, as scripts/bench-embedding makes it); resolved, built
/// and run against a real cache. The resolution fetches avatar-cache alone, and the build
/// prints no warning (no "prohibited flag(s): -pthread" from a pkg-config file).
///
/// The same package holds every other Swift block of the guide and the catalog, each an
/// executable target as its `<!-- snippet: … -->` line says (embedding_package.py
/// --snippets): a block that does not compile fails the build, one without that line, or an
/// excerpt no longer as its file has it, fails the making of the package. Each `.package`
/// line shown alone (the catalog's, the guide's `revision:`) is resolved in a manifest of
/// its own, `<commit>` being the tagged copy's commit.
@Suite(.serialized) struct EmbeddingPackageTests {
    /// `script` run by bash with `arguments` as $1…, through the tests' runner of processes.
    static func shell(_ script: String, _ arguments: [String] = []) throws -> Binary.Result {
        try Binary.run(["-c", script, "bash"] + arguments, executable: URL(fileURLWithPath: "/bin/bash"))
    }

    @Test func theGuidesPackageResolvesOnlyAvatarCacheBuildsAndAnswers() async throws {
        let server = try FixtureServer(routes: ["/p.jpg": .ok(bytes: try Fixtures.photo("chelsea.jpg"))])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("embedding")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([(id: "p", name: "Pat Doe", url: server.url("/p.jpg")), (id: "m", name: "Mo Ray", url: nil)], in: directory)
        let cache = directory.appendingPathComponent("cache")
        _ = try await WarmPipeline(configuration: Fixtures.configuration(exports: [export], cache: cache), logger: .test).run()
        let lookup = try CacheLookup(cache: cache, recordsAccess: false)
        let photo = try #require(try await lookup.answer(forUser: "p", viewSize: 55, scale: 3).file)
        let monogram = try #require(try await lookup.answer(forUser: "m", viewSize: 55, scale: 3).file)

        // The working tree's files (committed or not), as a release: a repository with the tag.
        let release = directory.appendingPathComponent("avatar-cache")
        let copied = try Self.shell("""
            set -e
            mkdir -p "$2"
            cd "$1"
            git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
              [ -f "$f" ] && printf '%s\\0' "$f"
            done | xargs -0 cp --parents -t "$2"
            cd "$2"
            git init -q
            git add -A
            git -c user.name=test -c user.email=test@example.com commit -qm release
            git tag "v$3"
            """, [Fixtures.repositoryRoot.path, release.path, AvatarCacheVersion.number])
        try #require(copied.status == 0, "\(copied.stdout)\(copied.stderr)")
        let commit = try Self.shell("git -C \"$1\" rev-parse HEAD", [release.path]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let app = directory.appendingPathComponent("app")
        let made = try Self.shell("python3 \"$1/scripts/embedding_package.py\" --snippets \"$1\" \"$2\" \"file://$3\" \"$4\"",
                                  [Fixtures.repositoryRoot.path, app.path, release.path, commit])
        try #require(made.status == 0, "\(made.stdout)\(made.stderr)")
        let manifest = try String(contentsOf: app.appendingPathComponent("Package.swift"), encoding: .utf8)
        #expect(manifest.contains("from: \"\(AvatarCacheVersion.number)\""), "the guide names this version: \(manifest)")
        let snippets = manifest.components(separatedBy: ".executableTarget(").count - 2
        #expect(snippets >= 4, "the docs' blocks made \(snippets) targets besides the app: \(manifest)")

        let built = try Self.shell("cd \"$1\" && swift package resolve 2>&1 && swift build 2>&1", [app.path])
        #expect(built.status == 0, "\(built.stdout)\(built.stderr)")
        let warnings = built.stdout.split(separator: "\n").filter { $0.contains("warning:") }
        #expect(warnings.isEmpty, "an app's build warns: \(warnings.joined(separator: "\n"))")
        let checkouts = try FileManager.default.contentsOfDirectory(atPath: app.appendingPathComponent(".build/checkouts").path)
        #expect(checkouts == ["avatar-cache"], "the resolution fetched \(checkouts)")

        // The `.package` lines shown alone, each in the guide's manifest in place of its own.
        let alone = try FileManager.default.contentsOfDirectory(atPath: app.appendingPathComponent("dependencies").path).sorted()
        #expect(alone.count >= 2, "\(alone)")
        var byCommit = false
        for name in alone {
            let package = app.appendingPathComponent("dependencies/\(name)")
            let shown = try String(contentsOf: package.appendingPathComponent("Package.swift"), encoding: .utf8)
            if shown.contains("revision: \"\(commit)\", traits: []") { byCommit = true }
            let resolved = try Self.shell("cd \"$1\" && swift package resolve 2>&1", [package.path])
            #expect(resolved.status == 0 && !resolved.stdout.contains("warning:"), "\(name): \(resolved.stdout)\(resolved.stderr)")
            let fetched = try FileManager.default.contentsOfDirectory(atPath: package.appendingPathComponent(".build/checkouts").path)
            #expect(fetched == ["avatar-cache"], "\(name): the resolution fetched \(fetched)")
        }
        #expect(byCommit, "no `.package` line of the docs names a commit (`revision:`)")

        let binary = app.appendingPathComponent(".build/debug/app").path
        let forPhoto = try Self.shell("\"$1\" \"$2\" p", [binary, cache.path])
        #expect(forPhoto.stdout.hasPrefix("photo: \(photo.path)\n") && forPhoto.stdout.contains("placeholder: "), "\(forPhoto.stdout)")
        let forMonogram = try Self.shell("\"$1\" \"$2\" m", [binary, cache.path])
        #expect(forMonogram.stdout == "monogram: \(monogram.path)\n", "\(forMonogram.stdout)")
        let forNobody = try Self.shell("\"$1\" \"$2\" nobody", [binary, cache.path])
        #expect(forNobody.stdout == "user \"nobody\" is not in the cache: draw a generic avatar\n", "\(forNobody.stdout)")
        let notACache = try Self.shell("\"$1\" \"$2\" p", [binary, directory.path])
        #expect(notACache.stdout.hasPrefix("the cache cannot be read: ") && notACache.stdout.contains("not an avatar-cache cache"), "\(notACache.stdout)")
    }

    /// docs/embedding.md, "Depending on a local copy or a mirror": a clone in a folder of
    /// another name is that folder's package (`package: "avatars"`; the manifest's own
    /// name does not answer), and a mirror set with `swift package config set-mirror`
    /// keeps the manifest as the guide writes it (`package: "avatar-cache"`), fetching from
    /// the mirror (a local repository: nothing leaves the machine).
    @Test func aPathAndAMirrorNameThePackageAsTheGuideSays() throws {
        let directory = try Fixtures.temporaryDirectory("embedding-path")
        defer { try? FileManager.default.removeItem(at: directory) }
        let clone = directory.appendingPathComponent("vendor/avatars")
        let copied = try Self.shell("""
            set -e
            mkdir -p "$2"
            cd "$1"
            git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
              [ -f "$f" ] && printf '%s\\0' "$f"
            done | xargs -0 cp --parents -t "$2"
            cd "$2"
            git init -q
            git add -A
            git -c user.name=test -c user.email=test@example.com commit -qm mirror
            git tag "v$3"
            """, [Fixtures.repositoryRoot.path, clone.path, AvatarCacheVersion.number])
        try #require(copied.status == 0, "\(copied.stdout)\(copied.stderr)")

        /// An app whose manifest depends on `dependency` and names the product's package `name`.
        func app(_ label: String, dependency: String, package name: String) throws -> URL {
            let app = directory.appendingPathComponent(label)
            try FileManager.default.createDirectory(at: app.appendingPathComponent("Sources/app"), withIntermediateDirectories: true)
            try """
                // swift-tools-version:6.1
                import PackageDescription

                let package = Package(
                    name: "app",
                    dependencies: [\(dependency)],
                    targets: [
                        .executableTarget(name: "app", dependencies: [.product(name: "AvatarCacheLookup", package: "\(name)")]),
                    ]
                )
                """.write(to: app.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
            try "import AvatarCacheLookup\nprint(CacheLookup.maximumViewSize)\n"
                .write(to: app.appendingPathComponent("Sources/app/main.swift"), atomically: true, encoding: .utf8)
            return app
        }
        // Loading the package graph checks every product's package name.
        func graph(_ app: URL) throws -> Binary.Result {
            try Self.shell("cd \"$1\" && swift package show-dependencies 2>&1", [app.path])
        }

        let byPath = ".package(path: \"\(clone.path)\", traits: [])"
        let named = try graph(try app("path", dependency: byPath, package: "avatars"))
        #expect(named.status == 0, "\(named.stdout)\(named.stderr)")
        let misnamed = try graph(try app("path-misnamed", dependency: byPath, package: "avatar-cache"))
        #expect(misnamed.status != 0 && misnamed.stdout.contains("avatars"), "\(misnamed.stdout)")

        let original = "https://github.com/avatar-cache/avatar-cache.git"
        let mirrored = try app("mirror", dependency: ".package(url: \"\(original)\", from: \"\(AvatarCacheVersion.number)\", traits: [])",
                               package: "avatar-cache")
        let mirror = try Self.shell("cd \"$1\" && swift package config set-mirror --original \"$2\" --mirror \"file://$3\" 2>&1 && swift package resolve 2>&1",
                                    [mirrored.path, original, clone.path])
        #expect(mirror.status == 0, "\(mirror.stdout)\(mirror.stderr)")
        let fetched = try FileManager.default.contentsOfDirectory(atPath: mirrored.appendingPathComponent(".build/checkouts").path)
        #expect(fetched.count == 1, "the mirror fetched \(fetched)")
        let resolved = try String(contentsOf: mirrored.appendingPathComponent("Package.resolved"), encoding: .utf8)
        // Pinned under the original URL (its identity the mirror's), the manifest's
        // `package: "avatar-cache"` answering all the same.
        #expect(resolved.contains("\"location\" : \"\(original)\""), "\(resolved)")
        let graphed = try graph(mirrored)
        #expect(graphed.status == 0, "\(graphed.stdout)\(graphed.stderr)")
    }
}
