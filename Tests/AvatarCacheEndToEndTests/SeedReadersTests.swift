import Crypto
import Foundation
import Testing
@testable import AvatarCacheExports
@testable import AvatarCacheImaging
@testable import AvatarCacheModel
@testable import AvatarCachePipeline
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

/// What Monica's pages and vCard files state they hold, against what is read: counted per
/// input (a vCard file's BEGIN:VCARD lines), or across the inputs that state one number
/// together (Monica's pages, saved one a file and given as a glob: each states the whole
/// `meta.total`).
@Suite final class StatedCountTests {
    let scratch: URL

    init() throws { scratch = try Fixtures.temporaryDirectory("stated-counts") }

    deinit { try? FileManager.default.removeItem(at: scratch) }

    func counts(_ reader: ExportReader) throws -> [InputCount] {
        var counts: [InputCount] = []
        try reader.read { if case .count(let count) = $0 { counts.append(count) } }
        return counts
    }

    func sample(_ path: String) -> String { Fixtures.repositoryRoot.appendingPathComponent("samples/\(path)").path }

    func report() -> RunReport {
        RunReport(startedAt: Date(), exports: [], cacheDirectory: "", budgetBytes: 0)
    }

    /// A report of a read that counted `counts`, in order.
    func reported(_ counts: [InputCount]) -> RunReport {
        var read = ReadStage.Outcome()
        for count in counts { read.record(count) }
        var run = report()
        run.add(read)
        return run
    }

    @Test func monicasPagesAreCountedTogetherAgainstTheirTotal() throws {
        let both = reported(try ["monica/contacts-page-1.json", "monica/contacts-page-2.json"].flatMap { try counts(MonicaReader(path: sample($0))) })
        #expect(both.inputCounts.count == 1)
        #expect(both.inputCounts.first.map { ($0.read, $0.stated, $0.inputs) } ?? (0, 0, 0) == (14, 14, 2))
        #expect(both.recordsLost == 0)
        #expect(both.countsText == "contacts read 14 of 14 stated")

        let one = reported(try counts(MonicaReader(path: sample("monica/contacts-page-1.json"))))
        #expect(one.recordsLost == 6)
        #expect(one.inputCounts.first?.lossReason == "meta.total of the pages states 14 contacts; 8 were read from 1 input: 6 lost")
        #expect(one.countsText == "contacts read 8 of 14 stated (6 LOST)")
    }

    /// A folder of pages whose meta says there are three: the one missing is named.
    @Test func aMissingPageIsNamed() throws {
        let folder = scratch.appendingPathComponent("pages").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for page in [1, 3] {
            let contacts = (0..<2).map { ["id": page * 10 + $0, "object": "contact", "first_name": "P\(page)", "last_name": "C\($0)",
                                          "information": ["avatar": ["url": "", "source": "default", "default_avatar_color": "#b3d5fe"]]] as [String: Any] }
            let body: [String: Any] = ["data": contacts, "meta": ["current_page": page, "last_page": 3, "per_page": 2, "total": 6,
                                                                  "path": "https://monica.example.com/api/contacts?token=secret"]]
            try JSONSerialization.data(withJSONObject: body).write(to: URL(fileURLWithPath: "\(folder)/page-\(page).json"))
        }
        let run = reported(try counts(MonicaReader(path: folder)))
        let count = try #require(run.inputCounts.first)
        #expect(count.pages == [1, 3] && count.missingPages == [2])
        #expect(count.lossReason.contains("states 6 contacts; 4 were read from 1 input (page 2 of 3 missing): 2 lost"), "\(count.lossReason)")
        #expect(!count.statedBy.contains("secret"), "the list's URL is shown without its credentials: \(count.statedBy)")
    }

    /// A hostile page's numbers are bounded: a last page of 10^15 names at most 1,000
    /// missing pages, none past one a stated record.
    @Test func aHostilePagesNumbersAreBounded() {
        var count = InputCount(source: "p", statedBy: "meta.total", unit: "contacts", stated: 100, read: 1)
        count.shared = true
        count.pages = [1]
        count.lastPage = 1_000_000_000_000_000
        let missing = count.missingPages
        #expect(missing.count == 99 && missing.last == 100)
        count.stated = 1 << 40
        #expect(count.missingPages.count == 1000)
    }

    /// The samples' vCards: nine begun, one cut short (its card lost, a bad record).
    @Test func vCardFilesAreCountedByTheirCards() throws {
        let counts = try counts(JamiReader(path: sample("jami")))
        #expect(counts.map { ($0.stated, $0.read, $0.unit) }.first ?? (0, 0, "") == (9, 8, "cards"))
        #expect(counts.first?.statedBy == "its BEGIN:VCARD lines")
    }

    /// A vCard cut short fails the run with exit 5, unless --max-failure-rate allows it.
    @Test func aLostCardFailsTheRunUnlessAllowed() throws {
        let folder = scratch.appendingPathComponent("cards").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ada Lovelace\r\nEND:VCARD\r\n".write(toFile: folder + "/ada.vcf", atomically: true, encoding: .utf8)
        try "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Cut Sh".write(toFile: folder + "/cut.vcf", atomically: true, encoding: .utf8)
        let cache = scratch.appendingPathComponent("cache").path
        let lost = try Binary.run(["warm", folder, "--cache", cache])
        #expect(lost.status == 5, "\(lost.stderr)")
        #expect(lost.stdout.contains("cards read 1 of 2 stated (1 LOST)"), "\(lost.stdout)")
        #expect(lost.stderr.contains("cut.vcf") && lost.stderr.contains("truncated"), "\(lost.stderr)")
        let allowed = try Binary.run(["warm", folder, "--cache", cache, "--max-failure-rate", "0.5"])
        #expect(allowed.status == 0, "\(allowed.stderr)")
    }
}

/// SHA-256 in hex by swift-crypto: the key of an inline photo, computed apart from ours.
private func sha256Hex(_ bytes: [UInt8]) -> String {
    SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
}
