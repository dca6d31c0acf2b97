import Foundation
import Testing
@testable import AvatarCacheExports
import AvatarCacheModel
import AvatarCacheTestKit

/// Names written in a legacy charset without saying which (Japanese phones' Shift_JIS, and
/// the other charsets the tests' address books came in): each read as its own script.
@Suite struct UndeclaredCharsetTests {
    @Test(arguments: [
        ("Shift_JIS", "小西 一弘"), ("Shift_JIS", "山田 太郎"), ("Shift_JIS", "やまだ たろう"), ("Shift_JIS", "ヤマダ タロウ"),
        ("GB18030", "张伟"), ("GB18030", "王芳"), ("GB18030", "李娜 刘洋"),
        ("Big5", "陳大文"), ("Big5", "林志玲"),
        ("EUC-KR", "김민준"), ("EUC-KR", "이서연"),
        ("KOI8-R", "Иван Петров"), ("KOI8-R", "Мария"),
        ("windows-1252", "Müller"), ("windows-1252", "Amélie Poulain"), ("windows-1252", "José García"), ("windows-1252", "Søren Ærø"),
    ])
    func aNameInALegacyCharsetIsReadAsItsScript(charset: String, name: String) throws {
        let candidate = try #require(CharsetGuess.candidates.first { $0.name == charset })
        let bytes = try #require(name.data(using: candidate.encoding).map(Array.init))
        #expect(String(validating: bytes, as: UTF8.self) == nil, "not UTF-8")
        let guess = try #require(CharsetGuess.decode(bytes))
        let scores = CharsetGuess.candidates.map { candidate in
            "\(candidate.name): \(String(data: Data(bytes), encoding: candidate.encoding).flatMap { CharsetGuess.score($0, candidate) }.map { String($0) } ?? "-")"
        }
        #expect(guess.0 == name && guess.1 == charset, "\(guess); \(scores)")
    }

    /// The same charsets declared (`CHARSET=BIG5`, `GB18030`, `EUC-KR`, `KOI8-R`): read as
    /// declared, nothing reported.
    @Test(arguments: [("BIG5", "陳大文"), ("GB18030", "张伟"), ("EUC-KR", "김민준"), ("KOI8-R", "Иван Петров")])
    func theSameCharsetsDeclared(charset: String, name: String) throws {
        let encoding = try #require(VCardParser.encoding(named: charset))
        let card = Array("BEGIN:VCARD\r\nVERSION:2.1\r\nFN;CHARSET=\(charset):".utf8) + Array(name.data(using: encoding)!) + Array("\r\nEND:VCARD\r\n".utf8)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("declared-\(UUID().uuidString).vcf")
        try Data(card).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let read = try Fixtures.read(JamiReader(path: file.path))
        #expect(read.profiles.map(\.displayName) == [name])
        #expect(read.bad.isEmpty, "\(read.bad)")
    }

    /// The issue's card: a Japanese phone's N and FN in Shift_JIS, no CHARSET: the name
    /// and initials as the phone shows them, the guess reported.
    @Test func aJapanesePhonesCardWithoutCharset() throws {
        var card: [UInt8] = Array("BEGIN:VCARD\r\nVERSION:2.1\r\nN:".utf8)
        card += "小西;一弘".data(using: .shiftJIS)!
        card += Array("\r\nFN:".utf8) + "小西 一弘".data(using: .shiftJIS)! + Array("\r\nEND:VCARD\r\n".utf8)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sjis-\(UUID().uuidString).vcf")
        try Data(card).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let read = try Fixtures.read(JamiReader(path: file.path))
        #expect(read.profiles.map(\.displayName) == ["小西 一弘"])
        #expect(read.profiles.map(\.initials) == ["小一"])
        #expect(read.bad.map(\.reason).contains("FN: not valid UTF-8 and no CHARSET given: read as Shift_JIS"), "\(read.bad)")
    }
}

/// Groups as address books write them: drawn with the group glyph, named by their FN, their
/// list's name, else their members'.
@Suite struct VCardGroupTests {
    @Test func groupsInEveryFormAreDrawnAsGroups() throws {
        let cards = [
            "BEGIN:VCARD\r\nVERSION:3.0\r\nX-ADDRESSBOOKSERVER-KIND:group\r\nFN:Climbers\r\nUID:apple-group\r\nX-ADDRESSBOOKSERVER-MEMBER:urn:uuid:a\r\nEND:VCARD\r\n",
            "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:v4-group\r\nFN:Book club\r\nMEMBER:urn:uuid:b\r\nEND:VCARD\r\n",
            "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:evolution-list\r\nFN:Neighbours\r\nX-EVOLUTION-LIST:TRUE\r\nEND:VCARD\r\n",
            "BEGIN:VCARD\r\nVERSION:2.1\r\nUID:outlook-dl\r\nX-DL:Design Work Group:Item 1;Item 2\r\nEND:VCARD\r\n",
            "BEGIN:VCARD\r\nVERSION:2.1\r\nUID:card-of-cards\r\nBEGIN:VCARD\r\nN:Example;Ann\r\nUID:ann\r\nEND:VCARD\r\nBEGIN:VCARD\r\nN:Roe;Bob\r\nUID:bob\r\nEND:VCARD\r\n"
                + "BEGIN:VCARD\r\nFN:Cy Doe\r\nUID:cy\r\nEND:VCARD\r\nEND:VCARD\r\n",
            "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:a-person\r\nFN:Dee Person\r\nEND:VCARD\r\n",
        ]
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("groups-\(UUID().uuidString).vcf")
        try cards.joined().write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let read = try Fixtures.read(JamiReader(path: file.path))
        let byID = Dictionary(uniqueKeysWithValues: read.profiles.map { ($0.id, $0) })
        for (id, name) in [("apple-group", "Climbers"), ("v4-group", "Book club"), ("evolution-list", "Neighbours"),
                           ("outlook-dl", "Design Work Group"), ("card-of-cards", "Ann Example, Bob Roe and 1 more")] {
            #expect(byID[id]?.glyph == .group, "\(id): \(String(describing: byID[id]))")
            #expect(byID[id]?.displayName == name, "\(id)")
        }
        #expect(byID["ann"]?.glyph == nil && byID["ann"]?.displayName == "Ann Example", "a member is a contact of its own")
        #expect(byID["a-person"]?.glyph == nil && byID["a-person"]?.initials == "DP")
    }
}
