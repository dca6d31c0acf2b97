import AvatarCache
import Foundation
import Testing
import AvatarCacheTestSupport
@testable import AvatarCacheIndex
@testable import AvatarCacheLookup
@testable import AvatarCachePipeline

/// An app developer following docs/embedding.md word for word: this repository, tagged as
/// the release its version names, in a git repository of its own; a new package whose
/// manifest is the guide's and whose main.swift is the DocC catalog's program
/// (scripts/embedding_package.py, as scripts/bench-embedding makes it); resolved, built
/// and run against a real cache. The resolution fetches avatar-cache alone.
@Suite(.serialized) struct EmbeddingPackageTests {
    @discardableResult
    static func shell(_ script: String, _ arguments: [String] = [], in directory: URL? = nil) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", script, "bash"] + arguments
        if let directory { process.currentDirectoryURL = directory }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
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
        let photo = try #require(try lookup.answer(forUser: "p", viewSize: 55, scale: 3).file)
        let monogram = try #require(try lookup.answer(forUser: "m", viewSize: 55, scale: 3).file)

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
        #expect(copied.status == 0, "\(copied.output)")
        let app = directory.appendingPathComponent("app")
        let made = try Self.shell("python3 \"$1/scripts/embedding_package.py\" \"$1\" \"$2\" \"file://$3\"",
                                  [Fixtures.repositoryRoot.path, app.path, release.path])
        #expect(made.status == 0, "\(made.output)")
        let manifest = try String(contentsOf: app.appendingPathComponent("Package.swift"), encoding: .utf8)
        #expect(manifest.contains("from: \"\(AvatarCacheVersion.number)\""), "the guide names this version: \(manifest)")

        let built = try Self.shell("set -o pipefail; swift package resolve && ls .build/checkouts && swift build 2>&1 | tail -n 20", in: app)
        #expect(built.status == 0, "\(built.output)")
        let checkouts = try FileManager.default.contentsOfDirectory(atPath: app.appendingPathComponent(".build/checkouts").path)
        #expect(checkouts == ["avatar-cache"], "the resolution fetched \(checkouts)")

        let binary = app.appendingPathComponent(".build/debug/app").path
        let forPhoto = try Self.shell("\"$1\" \"$2\" p", [binary, cache.path])
        #expect(forPhoto.output.hasPrefix("photo: \(photo.path)\n") && forPhoto.output.contains("placeholder: "), "\(forPhoto.output)")
        let forMonogram = try Self.shell("\"$1\" \"$2\" m", [binary, cache.path])
        #expect(forMonogram.output == "monogram: \(monogram.path)\n", "\(forMonogram.output)")
        let forNobody = try Self.shell("\"$1\" \"$2\" nobody", [binary, cache.path])
        #expect(forNobody.output == "user \"nobody\" is not in the cache: draw a generic avatar\n", "\(forNobody.output)")
        let notACache = try Self.shell("\"$1\" \"$2\" p", [binary, directory.path])
        #expect(notACache.output.hasPrefix("the cache cannot be read: ") && notACache.output.contains("not an avatar-cache cache"), "\(notACache.output)")
    }
}
