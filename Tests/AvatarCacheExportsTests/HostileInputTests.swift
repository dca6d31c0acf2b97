import Foundation
import Testing
@testable import AvatarCacheExports
@testable import AvatarCacheFetching
@testable import AvatarCacheMonograms
import AvatarCacheTestKit

/// Malformed, truncated, huge and non-UTF-8 exports; a seeded fuzz of every reader.
@Suite struct HostileInputTests {
    func read(_ reader: ExportReader) -> (profiles: Int, bad: Int, error: Bool) {
        var profiles = 0, bad = 0
        do {
            try reader.read { item in
                switch item {
                case .profile: profiles += 1
                case .bad: bad += 1
                case .note: break
                case .count: break
                }
            }
        } catch {
            return (profiles, bad, true)
        }
        return (profiles, bad, false)
    }

    func write(_ bytes: [UInt8], _ name: String, in directory: URL) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func hugeAndBrokenRecordsAreReportedNotFatal() throws {
        let directory = try Fixtures.temporaryDirectory("inputs")
        defer { try? FileManager.default.removeItem(at: directory) }
        let longName = String(repeating: "Ω", count: 10_000)
        let longURL = "http://example.com/" + String(repeating: "a", count: 100_000)
        var json = Array("[{\"id\": \"a\", \"displayName\": \"\(longName)\"},\n{\"id\": \"b\", \"profileImageUrl\": \"\(longURL)\"},\n".utf8)
        json += Array("{\"id\": \"c\", \"displayName\": \"bad ".utf8) + [0xC3, 0x28, 0xFF, 0xFE] + Array("\"},\n{\"id\": \"d\"}]".utf8)
        let users = read(NexusUsersReader(path: try write(json, "users.json", in: directory)))
        #expect(users.profiles == 3 && users.bad == 1 && !users.error, "\(users)")

        // A 40 MB photo in a vCard: the card is over the record limit (room for a 20 MB
        // photo), so it is reported and skipped; the next card is read.
        var card = Array("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Big Photo\r\nPHOTO;ENCODING=b;TYPE=JPEG:".utf8)
        card += [UInt8](repeating: UInt8(ascii: "A"), count: 40_000_000 / 3 * 4)
        card += Array("\r\nEND:VCARD\r\nBEGIN:VCARD\r\nFN:".utf8) + [0xFF, 0xC0, 0x80] + Array(" Latin1 \u{E9}\r\nEND:VCARD\r\n".utf8)
        var limits = ReaderLimits()
        limits.maxInlineBytes = 20_000_000
        var reasons: [String] = []
        var names: [String] = []
        try JamiReader(path: try write(card, "big.vcf", in: directory), limits: limits).read { item in
            switch item {
            case .profile(let profile): names.append(profile.displayName)
            case .bad(let bad): reasons.append(bad.reason)
            case .note: break
            case .count: break
            }
        }
        #expect(names.count == 1 && names[0].hasSuffix("Latin1 é"), "\(names)")
        // The invalid UTF-8 in the second card's name is reported too (no CHARSET said otherwise).
        #expect(reasons.count == 2 && reasons[0].contains("larger than"), "\(reasons)")
        #expect(reasons.last?.contains("FN: not valid UTF-8 and no CHARSET given") == true, "\(reasons)")

        let initials = Initials.from(displayName: longName)
        #expect(initials == "ΩΩ")
        #expect((try? NetworkPolicy(allowPrivateNetworks: false).checkedURL(longURL)) == nil)
        HostileLedger.record("inputs", "huge and broken records", tried: "a 10,000-character name, a 100 KB URL, invalid UTF-8 in JSON and vCard, a 40 MB vCard photo", count: 5, outcome: "bad records reported with line and reason (invalid UTF-8, a vCard over the record limit), the long name gives initials, the URL is refused as invalidURL, the rest read")
    }

    /// Mutates the sample exports (bit flips, cuts, repeated and inserted structural
    /// bytes) with a fixed seed and reads each mutant: a reader may report bad records or
    /// refuse the file, never crash or hang.
    @Test func seededFuzzOfEveryReader() throws {
        let directory = try Fixtures.temporaryDirectory("fuzz")
        defer { try? FileManager.default.removeItem(at: directory) }
        let iterations = Int(ProcessInfo.processInfo.environment["AVATAR_CACHE_FUZZ_ITERATIONS"] ?? "") ?? 400
        let samples: [(String, String, (String) -> ExportReader)] = [
            ("nexus-users", "nexus-users.json", { NexusUsersReader(path: $0) }),
            ("nexus-conversations", "nexus-conversations.json", { NexusConversationsReader(path: $0) }),
            ("monica", "monica/contacts-page-1.json", { MonicaReader(path: $0) }),
            ("jami", "jami/team.vcf", { JamiReader(path: $0) }),
        ]
        var random = SeededRandom(seed: 2026)
        var totals: [String] = []
        for (name, sample, reader) in samples {
            let original = [UInt8](try Data(contentsOf: Fixtures.repositoryRoot.appendingPathComponent("samples/\(sample)")))
            var profiles = 0, bad = 0, refused = 0
            let started = Date()
            for iteration in 0..<iterations {
                var bytes = original
                for _ in 0...random.below(8) {
                    guard !bytes.isEmpty else { break }
                    let at = random.below(bytes.count)
                    switch random.below(6) {
                    case 0: bytes[at] ^= UInt8(1 << random.below(8))
                    case 1: bytes = Array(bytes.prefix(at))
                    case 2: bytes.insert(contentsOf: Array("{[\"\\:,]}\n".utf8).shuffled(using: &random), at: at)
                    case 3: bytes.insert(contentsOf: [0xFF, 0xFE, 0xC0, 0x00, 0xED, 0xA0, 0x80], at: at)
                    case 4: bytes.replaceSubrange(at..<min(bytes.count, at + random.below(64)), with: [])
                    default: bytes.insert(contentsOf: bytes[at..<min(bytes.count, at + random.below(200))], at: at)
                    }
                }
                let path = try write(bytes, "mutant-\(iteration).\(sample.hasSuffix(".vcf") ? "vcf" : "json")", in: directory)
                let result = read(reader(path))
                profiles += result.profiles
                bad += result.bad
                refused += result.error ? 1 : 0
                try FileManager.default.removeItem(atPath: path)
            }
            let seconds = Date().timeIntervalSince(started)
            #expect(seconds < 60, "\(name): \(iterations) mutants in \(seconds) s")
            totals.append("\(name): \(profiles) profiles, \(bad) bad records, \(refused) files refused")
        }
        HostileLedger.record("inputs", "seeded fuzz", tried: "\(iterations) mutants of each reader's sample (bit flips, cuts, inserted JSON/vCard syntax and invalid UTF-8, duplicated spans), seed 2026", count: iterations * samples.count, outcome: "no crash, no hang: " + totals.joined(separator: "; "))
    }
}

