import Foundation
import Testing
@testable import AvatarCache
@testable import AvatarCacheConfiguration
@testable import AvatarCacheExports
@testable import AvatarCacheFetching
@testable import AvatarCacheImaging
@testable import AvatarCachePipeline
@testable import AvatarCacheReporting
@testable import AvatarCacheStore
@testable import AvatarCacheLookup
@testable import AvatarCacheModel
@testable import AvatarCacheMonograms
@testable import AvatarCacheSupport

/// The pages keep naming what the code has: every pipeline-file key, every field of
/// `metadata.json`. (Commands, flags, exit codes and `warm`'s defaults: OperatorTests and
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
                    collect(inner, keysAreData: !keysAreData && (key == "entries" || key == "files"))
                }
            } else if let array = value as? [Any] {
                array.forEach { collect($0, keysAreData: false) }
            }
        }
        collect(json, keysAreData: false)
        #expect(fields.isSuperset(of: ["schemaVersion", "entries", "files", "placeholder", "thumbHash", "etag"]), "\(fields.sorted())")
        let page = try Fixtures.page("docs/cache-format.md")
        let missing = fields.sorted().filter { !page.contains("`\($0)`") }
        #expect(missing.isEmpty, "fields of metadata.json docs/cache-format.md does not name: \(missing)")
    }
}
