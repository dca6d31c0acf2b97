import Foundation
import Testing
@testable import AvatarCacheStore
import AvatarCacheTestKit

/// `metadata.json` walked as a stream (what `verify` reads): it finds what the whole
/// document decoded finds, and refuses what is not the document.
struct MetadataScanTests {
    /// What the walk hands over: entries' keys and their distinct file names, users' entries.
    struct Walked: Equatable {
        var entries: [String: Set<String>] = [:]
        var users: [String: String?] = [:]
        var summary: MetadataScan.Summary?
    }

    static func walk(_ directory: URL) throws -> Walked {
        var walked = Walked()
        walked.summary = try MetadataScan.walk(CacheDirectory(root: directory), entry: { key, files in
            #expect(walked.entries.updateValue(files, forKey: key) == nil, "\(key) handed over twice")
        }, user: { id, entry in
            walked.users[id] = .some(entry)
        })
        return walked
    }

    static func write(_ text: String, in directory: URL) throws {
        try Data(text.utf8).write(to: directory.appendingPathComponent(CacheDirectory.metadataName))
    }

    @Test func theWalkFindsWhatTheDecodedDocumentHolds() throws {
        // 2,500 entries and users with awkward strings (escapes, control characters,
        // emoji), more than one 1 MB piece of the reader.
        let (index, directory) = try IndexAndDocumentTests.index(IndexAndDocumentTests.sample(entries: 2500))
        defer { index.close(); try? FileManager.default.removeItem(at: directory) }
        try index.read { try MetadataDocument.write(from: $0, to: CacheDirectory(root: directory)) }
        let size = try #require(CacheDirectory(root: directory).fileSize(CacheDirectory.metadataName))
        #expect(size > 1 << 20, "the document spans more than one piece: \(size) bytes")

        let document = try MetadataDocument.read(CacheDirectory(root: directory))
        let walked = try Self.walk(directory)
        #expect(walked.entries == document.entries.mapValues(\.distinctFilenames))
        let users = try #require(document.users)
        #expect(walked.users == users.mapValues(\.entry))
        #expect(users.values.contains { $0.entry == nil } && users.values.contains { $0.entry != nil })
        #expect(walked.summary == MetadataScan.Summary(schemaVersion: MetadataDocument.schemaVersion, entries: 2500, users: 2500))
    }

    @Test func stringsAreUnescapedAsJSONSays() throws {
        let directory = try Fixtures.temporaryDirectory("scan-escapes")
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.write(#"""
            { "updatedAt": "x", "extra": [1, -2.5e+3, true, false, null, {"a": [[]]}, "s"],
              "entries": { "https://e.com/\u00e9\ud83d\ude00\"\\\/\n": { "files": { "330": { "filename": "a\tb" }, "900": { "filename": "a\tb" } }, "kind": "photo" } },
              "schemaVersion": 3 }
            """#, in: directory)
        let walked = try Self.walk(directory)
        #expect(walked.entries == ["https://e.com/é😀\"\\/\n": ["a\tb"]])
        #expect(walked.summary == MetadataScan.Summary(schemaVersion: 3, entries: 1, users: nil), "a document of schema 3 has no users")
    }

    @Test func whatIsNotTheDocumentIsRefusedSayingWhere() throws {
        let directory = try Fixtures.temporaryDirectory("scan-bad")
        defer { try? FileManager.default.removeItem(at: directory) }
        let good = #"{"entries":{"k":{"files":{"330":{"filename":"f"}}}},"schemaVersion":4,"users":{"u":{"entry":"k","kind":"photo"}}}"#
        try Self.write(good, in: directory)
        #expect(try Self.walk(directory).users == ["u": "k"])
        let bad: [(String, String)] = [
            (String(good.dropLast(9)), "truncated"),
            (good + "x", "after the document"),
            (good.replacingOccurrences(of: #""schemaVersion":4"#, with: #""schemaVersion":9"#), "schema version 9"),
            (good.replacingOccurrences(of: #","schemaVersion":4"#, with: ""), "no schemaVersion"),
            (good.replacingOccurrences(of: #""filename":"f""#, with: #""name":"f""#), "no filename"),
            (good.replacingOccurrences(of: #""files""#, with: #""fils""#), "no files"),
            (good.replacingOccurrences(of: #","kind":"photo""#, with: ""), "no kind"),
            (good.replacingOccurrences(of: #""k":{"#, with: #""k" {"#), "expected ':'"),
            (good.replacingOccurrences(of: #""f""#, with: "\"a\u{1}b\""), "control character"),
            (good.replacingOccurrences(of: #""f""#, with: #""\ud800x""#), "lone surrogate"),
            (good.replacingOccurrences(of: #""f""#, with: #""\q""#), "unknown escape"),
            (good.replacingOccurrences(of: #""kind":"photo""#, with: #""kind":"photo","x":tru"#), "expected true"),
            (good.replacingOccurrences(of: #""kind":"photo""#, with: #""kind":"photo","x":-"#), "without digits"),
            (String(repeating: "[", count: 200) + "]", "expected an object"),
            (#"{"x":"# + String(repeating: "[", count: 200), "nested deeper"),
            ("", "expected an object"),
        ]
        for (text, reason) in bad {
            try Self.write(text, in: directory)
            do {
                _ = try Self.walk(directory)
                Issue.record("accepted \(text.prefix(60))")
            } catch let error as StoreError {
                guard case .unreadableMetadata(_, let said) = error else {
                    Issue.record("\(error)")
                    continue
                }
                #expect(said.contains(reason) && said.hasPrefix("at byte "), "\(said) (for \(text.prefix(60)))")
            }
        }
    }
}
