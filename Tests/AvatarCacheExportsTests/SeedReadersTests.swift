import Crypto
import Foundation
import Testing
@testable import AvatarCacheExports
@testable import AvatarCacheImaging
@testable import AvatarCacheModel
@testable import AvatarCacheSupport
import AvatarCacheTestKit

/// The Monica, Jami and conversations readers, on the committed samples and on
/// hand-made edge cases.
@Suite final class SeedReadersTests {
    /// Files the tests write, removed with the suite instance (one per test).
    let scratch: URL

    init() throws { scratch = try Fixtures.temporaryDirectory("seed") }

    deinit { try? FileManager.default.removeItem(at: scratch) }

    func read(_ reader: ExportReader) throws -> (profiles: [Profile], bad: [BadRecord]) {
        try Fixtures.read(reader)
    }

    func sample(_ path: String) -> String { Fixtures.repositoryRoot.appendingPathComponent("samples/\(path)").path }

    func write(_ text: String, name: String) throws -> String {
        let path = scratch.appendingPathComponent(name).path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    // MARK: Monica

    @Test func monicaSourcesDecideDownloadTokenAndMonogram() throws {
        let page1 = try read(MonicaReader(path: sample("monica/contacts-page-1.json")))
        let byID = Dictionary(uniqueKeysWithValues: page1.profiles.map { ($0.id, $0) })
        #expect(byID["101"]?.photo == nil, "default: no download")
        #expect(byID["101"]?.colorHex == "#B3D5FE", "default_avatar_color wins")
        #expect(byID["101"]?.initials == "RF")
        #expect(byID["102"]?.photo == .url("https://avatars.example.com/photos/astronaut.jpg", sendMonicaToken: false), "gravatar: no token")
        #expect(byID["103"]?.photo == .url("https://monica.example.com/photos/coffee.jpg", sendMonicaToken: true), "photo: token")
        guard case .inline(let adorable)? = byID["105"]?.photo else { Issue.record("adorable: inline data"); return }
        #expect(ImageFormat.sniff(adorable.bytes.withUnsafeBytes { UnsafeRawBufferPointer($0) }) == .png)
        #expect(byID["106"]?.initials == "SØ", "no last name: the first name's first two letters")
        #expect(page1.bad.isEmpty)

        let page2 = try read(MonicaReader(path: sample("monica/contacts-page-2.json")))
        #expect(page2.profiles.count == 6, "every contact is kept, with a monogram where needed")
        #expect(page2.profiles.filter { $0.photo != nil }.map(\.id) == ["109"], "only the photo source downloads")
        let reasons = page2.bad.map(\.reason)
        #expect(reasons.contains { $0.hasPrefix("unknown avatar source \"unknown-service\"") })
        #expect(reasons.contains("no avatar: monogram used"))
        #expect(reasons.contains("no \"information\": monogram used"))
        #expect(reasons.contains { $0.contains("not #RRGGBB") })
        #expect(reasons.contains { $0.contains("invalid base64") })
    }

    // MARK: Jami

    @Test func jamiFolderOfVCards() throws {
        let result = try read(JamiReader(path: sample("jami")))
        let byID = Dictionary(uniqueKeysWithValues: result.profiles.map { ($0.id, $0) })
        // vCard 3.0, folded base64 lines.
        guard case .inline(let amelie)? = byID["f00dfacef00dfacef00dfacef00dfacef00dface"]?.photo else {
            Issue.record("3.0 folded PHOTO"); return
        }
        #expect(amelie.bytes.prefix(3) == [0xFF, 0xD8, 0xFF])
        #expect(byID["f00dfacef00dfacef00dfacef00dfacef00dface"]?.initials == "AP")
        // vCard 2.1: PHOTO;JPEG;ENCODING=BASE64 with continuation lines up to a blank line.
        guard case .inline(let chidi)? = byID["0123456789abcdef0123456789abcdef01234567"]?.photo else {
            Issue.record("2.1 PHOTO"); return
        }
        let coffee = try AvatarRenderer(tiers: [110], maxPixels: 1_000_000).render(chidi.bytes)
        #expect(coffee.sourceWidth == 140, "the whole 2.1 photo was read")
        // A name that is an account id, and a group, get glyphs.
        #expect(byID["a3f1c2d4e5b6a7980112233445566778899aabbc"]?.glyph == .person)
        #expect(byID["swarm-7f3e91"]?.glyph == .group)
        #expect(byID["b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0"]?.initials == "김민")
        // Two cards in one file, ids from UID.
        #expect(byID["jami-priya"]?.photo != nil && byID["jami-tomas"]?.photo == nil)
        // Broken base64: reported, monogram. Missing END:VCARD: reported, skipped.
        #expect(byID["c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1"]?.photo == nil)
        #expect(byID["d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2d2"] == nil)
        #expect(result.bad.map(\.reason).sorted() == ["PHOTO is not valid base64: monogram used", "the file ends before END:VCARD (truncated?)"])
    }

    @Test func inlinePhotoKeyIsTheSHA256OfTheBytes() throws {
        let result = try read(JamiReader(path: sample("jami/f00dfacef00dfacef00dfacef00dfacef00dface.vcf")))
        guard case .inline(let photo)? = result.profiles.first?.photo else { Issue.record("no photo"); return }
        #expect(result.profiles.first?.photo?.key == "sha256:" + sha256Hex(photo.bytes))
    }

    @Test func vcardEdgeCases() throws {
        let text = "BEGIN:VCARD\nVERSION:3.0\nitem1.FN:Jo\\, the \\;Brave\nN:Brave;Jo;;;\nEND:VCARD\n"
            + "BEGIN:VCARD\nVERSION:3.0\nN:Ng;Mai;;;\nEND:VCARD\n"
            + "BEGIN:VCARD\nFN:Never Ends\nBEGIN:VCARD\nFN:After\nEND:VCARD\n"
        let result = try read(JamiReader(path: try write(text, name: "many.vcf")))
        #expect(result.profiles.map(\.displayName) == ["Jo, the ;Brave", "Mai Ng", "After"])
        #expect(result.profiles.map(\.id) == ["many#1", "many#2", "many#4"])
        #expect(result.bad.count == 1 && result.bad[0].reason.contains("no END:VCARD before the next BEGIN:VCARD"))
    }

    // MARK: Conversations

    @Test func conversationsMostRecentlyActiveFirst() throws {
        let result = try read(NexusConversationsReader(path: sample("nexus-conversations.json")))
        let order = result.profiles.map(\.id)
        // c2 (2026-11-21 07:45) then c5 (08:05 is later!) — c5 first, then c2, then c1 …
        #expect(Array(order.prefix(2)).sorted() == ["u1000", "u1013"], "c5 is the most recent conversation")
        #expect(order.firstIndex(of: "u1002")! < order.firstIndex(of: "u1001")!, "c2 before c1")
        #expect(order.last == "u1014" || order.last == "u1015", "c6 (2025) is the least recent")
        #expect(Set(order).count == order.count, "each participant once")
        // u1000 is in c1 and c5: ranked by c5, the more recent.
        #expect(order.firstIndex(of: "u1000")! < order.firstIndex(of: "u1004")!)
        // c7's last message comes from someone who is not a participant.
        #expect(result.bad.count == 1 && result.bad[0].reason.contains("\"u9999\" is not in participantIds"))
    }

    @Test func conversationDatesInEveryForm() throws {
        let text = """
            [{"id": "a", "participantIds": ["x"], "participants": {"x": {"displayName": "X"}}, "updatedAt": 1700000000},
             {"id": "b", "participantIds": ["y"], "participants": {"y": {"displayName": "Y"}}, "updatedAt": {"seconds": 1800000000, "nanoseconds": 0}},
             {"id": "c", "participantIds": ["z"], "participants": {"z": {"displayName": "Z"}}, "updatedAt": "2030-01-01T00:00:00.250Z"}]
            """
        let result = try read(NexusConversationsReader(path: try write(text, name: "c.json")))
        #expect(result.profiles.map(\.id) == ["z", "y", "x"])
    }

    // MARK: Detection

    @Test func formatsAreDetected() throws {
        #expect(try ExportFormat.detect(path: sample("nexus-users.json")) == .nexusUsers)
        #expect(try ExportFormat.detect(path: sample("nexus-conversations.json")) == .nexusConversations)
        #expect(try ExportFormat.detect(path: sample("monica/contacts-page-1.json")) == .monica)
        #expect(try ExportFormat.detect(path: sample("jami")) == .jami)
        #expect(try ExportFormat.detect(path: sample("jami/team.vcf")) == .jami)
        let csv = try write("id,name\n1,Ann\n", name: "users.csv")
        #expect(throws: ExportError.self) { try ExportFormat.detect(path: csv) }
        do { _ = try ExportFormat.detect(path: csv) } catch let error as ExportError {
            #expect(error.reason.contains("it starts with \"id,name"), "says what it saw: \(error.reason)")
        }
    }
}

/// SHA-256 in hex by swift-crypto: the key of an inline photo, computed apart from ours.
private func sha256Hex(_ bytes: [UInt8]) -> String {
    SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
}
