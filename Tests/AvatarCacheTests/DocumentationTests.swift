import Foundation
import Testing
import AvatarCacheTestSupport
@testable import AvatarCache
@testable import AvatarCacheConfiguration
@testable import AvatarCacheExports
@testable import AvatarCacheFetching
@testable import AvatarCacheImaging
@testable import AvatarCachePipeline
@testable import AvatarCacheReporting
@testable import AvatarCacheStore
@testable import AvatarCacheIndex
@testable import AvatarCacheLookup
@testable import AvatarCacheModel
@testable import AvatarCacheMonograms
@testable import AvatarCacheSupport

/// The pages keep naming what the code has: every pipeline-file key, every field of
/// `metadata.json`, every command, flag and exit code. (`warm`'s defaults:
/// SettingsTableTests; links and the README's shape: scripts/check-docs.)
@Suite struct DocumentationTests {
    @Test func everyPipelineKeyIsDocumented() throws {
        let pages = try Fixtures.page("docs/guide.md") + Fixtures.page("docs/commands.md")
        let missing = PipelineFile.keys.keys.sorted().filter {
            !(pages.contains("`\($0)`") || pages.contains("`--\($0) ") || pages.contains("`--\($0)`"))
        }
        #expect(missing.isEmpty, "pipeline keys docs/guide.md and docs/commands.md do not name: \(missing)")
        #expect(PipelineFile.keys.count > 40)
    }

    @Test func everyFieldOfTheAppsDocumentIsDocumented() throws {
        // A document with every optional field present somewhere, as the cache writes it.
        var metadata = IndexAndDocumentTests.sample(entries: 6)
        let first = try #require(metadata.entries.keys.sorted().first)
        metadata.entries[first]?.placeholder = Placeholder(thumbHash: "nEkGDwD2t4RTlnmbSkiJdYiGuXEIDlQD", color: "#946D50")
        let (index, directory) = try IndexAndDocumentTests.index(metadata)
        defer { index.close(); try? FileManager.default.removeItem(at: directory) }
        try index.read { try MetadataDocument.write(from: $0, to: CacheDirectory(root: directory)) }
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent(CacheDirectory.metadataName)))

        // Field names, not the keys that are data (a source's URL, a tier's size).
        var fields = Set<String>()
        func collect(_ value: Any, keysAreData: Bool) {
            if let object = value as? [String: Any] {
                for (key, inner) in object {
                    if !keysAreData { fields.insert(key) }
                    collect(inner, keysAreData: !keysAreData && (key == "entries" || key == "files" || key == "users"))
                }
            } else if let array = value as? [Any] {
                array.forEach { collect($0, keysAreData: false) }
            }
        }
        collect(json, keysAreData: false)
        #expect(fields.isSuperset(of: ["schemaVersion", "entries", "files", "placeholder", "thumbHash", "etag", "users", "entry", "glyph", "textColor"]), "\(fields.sorted())")
        let page = try Fixtures.page("docs/cache-format.md")
        let missing = fields.sorted().filter { !page.contains("`\($0)`") }
        #expect(missing.isEmpty, "fields of metadata.json docs/cache-format.md does not name: \(missing)")
    }
}

extension DocumentationTests {
    @Test func theDocsNameEverySubcommandFlagAndExitCode() throws {
        // The commands and flags as swift-argument-parser knows them, against the pages
        // where they are documented: a section per command in docs/commands.md, the exit
        // codes' table in docs/guide.md.
        let commands = try Fixtures.page("docs/commands.md"), guide = try Fixtures.page("docs/guide.md")
        let readme = commands + guide
        let dump = try Binary.run(["--experimental-dump-help"])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        let subcommands = try #require((root["command"] as? [String: Any])?["subcommands"] as? [[String: Any]])
        var checked = 0
        for subcommand in subcommands {
            guard let name = subcommand["commandName"] as? String, name != "help" else { continue }
            #expect(commands.contains("\n## `avatar-cache \(name)"), "docs/commands.md has a section for \(name)")
            for argument in subcommand["arguments"] as? [[String: Any]] ?? [] {
                for flag in argument["names"] as? [[String: Any]] ?? [] where flag["kind"] as? String == "long" {
                    guard let long = flag["name"] as? String, !["help", "version"].contains(long) else { continue }
                    // The flag itself, not a longer one it begins (--max-ttl-hours in --max-ttl-hours-x).
                    #expect(readme.range(of: "--\(long)(?![a-z-])", options: .regularExpression) != nil, "the docs name --\(long) of \(name)")
                    checked += 1
                }
            }
        }
        #expect(checked > 60)
        // Every exit code the tool uses has a row in the table.
        for code in [0, 3, 4, 64, 65, 66, 70, 73, 74, 75] {
            #expect(guide.contains("| \(code) |"), "exit code \(code) is in docs/guide.md")
        }
    }
}
