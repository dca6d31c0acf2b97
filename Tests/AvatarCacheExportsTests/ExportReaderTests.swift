import Foundation
import Testing
@testable import AvatarCacheExports
@testable import AvatarCacheModel
import AvatarCacheTestKit

@Suite struct ExportReaderTests {
    func read(_ text: String) throws -> (profiles: [Profile], bad: [BadRecord]) {
        let directory = try Fixtures.temporaryDirectory("reader")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("export.json").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return try Fixtures.read(NexusUsersReader(path: path))
    }

    @Test func topLevelArray() throws {
        let result = try read("""
            [
              {"id": "a", "displayName": "Ann Lee", "email": "a@x", "profileImageUrl": "https://h/a.jpg"},
              {"id": 42, "displayName": "Bo", "profileImageUrl": ""},
              {"id": "c", "displayName": "Cy \\"Quote\\" [x]", "avatarColorHex": "#112233"}
            ]
            """)
        #expect(result.bad.isEmpty)
        #expect(result.profiles.map(\.id) == ["a", "42", "c"])
        #expect(result.profiles[0].photoURL == "https://h/a.jpg")
        #expect(result.profiles[1].photoURL == nil, "an empty URL means no photo")
        #expect(result.profiles[2].displayName == "Cy \"Quote\" [x]")
        #expect(result.profiles[2].colorHex == "#112233")
    }

    @Test func usersWrapperWithOtherKeysFirst() throws {
        let result = try read("""
            {"exportedAt": "2026-01-01", "meta": {"users": "not this", "list": [1, 2]},
             "users": [{"id": "a", "displayName": "A"}, {"id": "b", "displayName": "B"}], "total": 2}
            """)
        #expect(result.bad.isEmpty)
        #expect(result.profiles.map(\.id) == ["a", "b"])
    }

    @Test func ndjsonWithABrokenLine() throws {
        let result = try read("""
            {"id": "a", "displayName": "A", "profileImageUrl": "https://h/a.jpg"}
            {"id": "b", "displayName": "B
            {"id": "c", "displayName": "C"}

            {"displayName": "no id"}
            """)
        #expect(result.profiles.map(\.id) == ["a", "c"])
        #expect(result.bad.count == 2)
        #expect(result.bad[0].index == 2 && result.bad[0].line == 2)
        #expect(result.bad[0].reason.contains("not valid JSON"))
        #expect(result.bad[1].line == 5 && result.bad[1].reason == "missing field \"id\"")
    }

    @Test func badRecordsInAnArrayNameIndexLineAndWhy() throws {
        let result = try read("""
            [
              {"id": "a"},
              {"id": ["x"]},
              "just a string",
              {"id": ""},
              {"id": "e", "profileImageUrl": 7}
            ]
            """)
        // A URL of the wrong type is reported and read as absent; the user is kept (issue 13).
        #expect(result.profiles.map(\.id) == ["a", "e"])
        #expect(result.profiles.last?.photo == nil)
        #expect(result.bad.map(\.index) == [2, 3, 4, 5])
        #expect(result.bad.map(\.line) == [3, 4, 5, 6])
        #expect(result.bad[0].reason.contains("\"id\""))
        #expect(result.bad[2].reason == "\"id\" is empty")
        #expect(result.bad[3].reason.contains("profileImageUrl"))
        #expect(result.bad[0].description.contains("record 2 (line 3)"))
    }

    @Test func truncatedExportKeepsWhatCameBefore() throws {
        let result = try read("""
            [{"id": "a"}, {"id": "b"}, {"id": "c", "displayNa
            """)
        #expect(result.profiles.map(\.id) == ["a", "b"])
        #expect(result.bad.count == 1)
        #expect(result.bad[0].reason.contains("truncated"))
    }

    @Test func notJSONAtAllIsAnExportError() throws {
        #expect(throws: ExportError.self) { _ = try read("id,name\n1,Ann\n") }
    }

    @Test func missingFileIsAnExportError() throws {
        #expect(throws: ExportError.self) {
            try NexusUsersReader(path: "/nonexistent/export.json").read { _ in }
        }
    }

    @Test func streamsLargeExportsInChunks() throws {
        // Far more bytes than one read chunk (256 KiB), records spanning chunk edges.
        var text = "[\n"
        for index in 0..<20_000 {
            text += "{\"id\": \"u\(index)\", \"displayName\": \"User \(index)\", \"profileImageUrl\": \"https://h/\(index).jpg\"},\n"
        }
        text += "{\"id\": \"last\"}]"
        let result = try read(text)
        #expect(result.bad.isEmpty)
        #expect(result.profiles.count == 20_001)
        #expect(result.profiles[12_345].photoURL == "https://h/12345.jpg")
    }

    /// Every reader trims ids, names and URLs with `trimmedWhitespace`, which walks in from
    /// the two ends instead of reading the whole string as Foundation does: it must trim
    /// what Foundation's `.whitespacesAndNewlines` trims, no more and no less.
    @Test func trimmedWhitespaceTrimsWhatFoundationTrims() {
        let blanks: [Character] = [" ", "\t", "\n", "\r", "\r\n", "\u{0B}", "\u{0C}", "\u{85}", "\u{A0}", "\u{1680}", "\u{2000}",
                                   "\u{200A}", "\u{2028}", "\u{2029}", "\u{202F}", "\u{205F}", "\u{3000}"]
        let others: [Character] = ["a", "é", "\u{200B}", "\u{FEFF}", "\u{180E}", "黄", "🙂", "e\u{301}", "\u{1}", "\u{301}"]
        var random = SeededRandom(seed: 7)
        for _ in 0..<3_000 {
            var text = ""
            for _ in 0..<random.below(8) {
                text.append(random.below(2) == 0 ? blanks[random.below(blanks.count)] : others[random.below(others.count)])
            }
            #expect(text.trimmedWhitespace == text.trimmingCharacters(in: .whitespacesAndNewlines), "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
        }
    }
}
