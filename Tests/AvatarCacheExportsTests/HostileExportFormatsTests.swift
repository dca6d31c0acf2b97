import Foundation
import Testing
@testable import AvatarCacheExports
@testable import AvatarCacheFetching
@testable import AvatarCacheImaging
@testable import AvatarCacheModel
@testable import AvatarCacheSupport
import AvatarCacheTestKit

/// Seeded fuzz of the newer export formats: Firestore's LevelDB logs and entities, the
/// Auth CSV, and bare-base64 and URL photos in vCards. Every mutant either reads or is
/// refused with a reason; none crashes or hangs (each is timed). (The inline image
/// formats: AvatarCacheImagingTests' HostileNewFormatsTests.)
@Suite struct HostileExportFormatsTests {
    @Test func seededFuzzOfFirestoreExportsAndAuthCSV() throws {
        var random = SeededRandom(seed: 36)
        let directory = try Fixtures.temporaryDirectory("firestore-fuzz")
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = Fixtures.repositoryRoot.appendingPathComponent("Tests/Fixtures/firebase/ember-cloud-firestore-adapter").path
        let root = directory.appendingPathComponent("export").path
        try FileManager.default.copyItem(atPath: source, toPath: root)
        let output = root + "/firestore_export/all_namespaces/all_kinds/output-0"
        let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))
        let map = try FieldMap(parsing: ["users=users", "name=name", "photo=referenceTo"])
        var profiles = 0, bad = 0, errors = 0, slowest = 0.0
        let iterations = 200
        for iteration in 0..<iterations {
            var bytes = original
            switch iteration % 3 {
            case 0: for _ in 0..<(1 + random.below(6)) { bytes[random.below(bytes.count)] ^= random.byte() }
            case 1: bytes = Array(bytes.prefix(random.below(bytes.count)))
            default:
                // A record's bytes changed and its checksum made right again: the entity
                // decoder sees the damage, not the log reader.
                let start = 7, length = Int(bytes[4]) | Int(bytes[5]) << 8
                for _ in 0..<(1 + random.below(4)) { bytes[start + random.below(length)] = random.byte() }
                let crc = CRC32C.masked(bytes[6..<(start + length)].withUnsafeBytes { CRC32C.checksum($0) })
                withUnsafeBytes(of: crc.littleEndian) { for k in 0..<4 { bytes[k] = $0[k] } }
            }
            try Data(bytes).write(to: URL(fileURLWithPath: output))
            let started = Date()
            do {
                try FirestoreReader(path: root, map: map).read { item in
                    switch item {
                    case .profile: profiles += 1
                    case .bad: bad += 1
                    case .note: break
                    case .count: break
                    }
                }
            } catch is ExportError {
                errors += 1
            }
            slowest = max(slowest, Date().timeIntervalSince(started))
        }
        #expect(slowest < 5)
        // The Auth CSV: random lines, quotes and commas.
        let csv = directory.appendingPathComponent("users.csv").path
        let alphabet = Array("ab,\"\r\n,,\"x@y.z,https://127.0.0.1/p.jpg".utf8)
        var csvProfiles = 0
        for _ in 0..<100 {
            let line = (0..<(30 + random.below(300))).map { _ in alphabet[random.below(alphabet.count)] }
            try Data(line).write(to: URL(fileURLWithPath: csv))
            var reader = try CSVLineReader(path: csv, maxRecordBytes: 1000)
            while let row = reader.next() { csvProfiles += row.problem == nil ? 1 : 0 }
        }
        HostileLedger.record("inputs", "Firestore and Auth fuzz", tried: "\(iterations) mutants of a real Firestore export (bit flips, cuts, entities changed under a right checksum), seed 36; 100 random auth:export CSV files",
                             count: iterations + 100, outcome: "no crash, no hang (slowest \(String(format: "%.2f", slowest)) s): \(profiles) people read, \(bad) bad records naming file and offset, \(errors) exports refused whole; CSV rows split: \(csvProfiles)")
    }

    @Test func seededFuzzOfVCardPhotosAsBareBase64AndURLs() async throws {
        var random = SeededRandom(seed: 38)
        let directory = try Fixtures.temporaryDirectory("vcard-photo-fuzz")
        defer { try? FileManager.default.removeItem(at: directory) }
        let jpeg = try [UInt8](Data(contentsOf: Fixtures.repositoryRoot.appendingPathComponent("samples/photos/chelsea-96.jpg")))
        let base64 = Data(jpeg).base64EncodedString()
        let folded = stride(from: 0, to: base64.count, by: 74).map { String(base64.dropFirst($0).prefix(74)) }
        // Thunderbird's bare value in a 3.0 card, and the 2.1 bare B with 2.1 continuation lines.
        let forms = ["BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ada Lovelace\r\nPHOTO:" + folded.joined(separator: "\r\n ") + "\r\nEND:VCARD\r\n",
                     "BEGIN:VCARD\r\nVERSION:2.1\r\nN:Lovelace;Ada\r\nPHOTO;JPEG;B:\r\n" + folded.map { "    " + $0 }.joined(separator: "\r\n") + "\r\n\r\nEND:VCARD\r\n"]
        let renderer = AvatarRenderer(tiers: [330, 110], maxPixels: 50_000_000)
        var inline = 0, decoded = 0, refusedImages = 0, reported = 0, slowest = 0.0
        let iterations = 200
        func read(_ bytes: [UInt8], _ name: String) throws -> (profiles: [Profile], bad: [BadRecord]) {
            let file = directory.appendingPathComponent(name)
            try Data(bytes).write(to: file)
            return try Fixtures.read(JamiReader(path: file.path))
        }
        for iteration in 0..<iterations {
            var bytes = Array(forms[iteration % 2].utf8)
            let photoAt = bytes.count / 4 + random.below(bytes.count / 2)
            switch iteration % 4 {
            case 0: for _ in 0..<(1 + random.below(8)) { bytes[photoAt + random.below(200)] ^= random.byte() }    // flips in the base64
            case 1: bytes = Array(bytes.prefix(photoAt))                                                            // cut inside the photo
            case 2: bytes.insert(contentsOf: [[58], [13, 10], [32, 32, 32], [61, 61], [0]][random.below(5)], at: photoAt)  // a colon, a line end, blanks, padding, NUL
            default: bytes.replaceSubrange(photoAt..<(photoAt + 4), with: Array("AAAA".utf8))                      // a group changed
            }
            let started = Date()
            let result = try read(bytes, "mutant-\(iteration).vcf")
            reported += result.bad.count
            for profile in result.profiles {
                guard case .inline(let photo)? = profile.photo else { continue }
                inline += 1
                do { _ = try renderer.render(photo.bytes, inline: true); decoded += 1 } catch is ImagingError { refusedImages += 1 }
            }
            slowest = max(slowest, Date().timeIntervalSince(started))
        }
        #expect(inline == decoded + refusedImages && inline > 0 && reported > 0)
        #expect(slowest < 5, "slowest mutant \(slowest) s")

        // Photo URLs: every one either reported by the reader or checked by the network
        // policy: nothing comes out allowed. No packet can leave, whatever the code under
        // test does: this test makes no HTTP client, and the policy's resolver is the
        // closure below (an address literal is itself, every name a private address; no
        // DNS), so an address let through would only be counted in `allowed`.
        let hostile = ["http://10.0.0.7/a.jpg", "https://169.254.169.254/latest/meta-data/", "http://127.0.0.1:9/x.png", "http://[::1]/a",
                       "http://[::ffff:169.254.169.254]/", "http://0x7f000001/", "http://2130706433/", "http://photos.internal/a.jpg",
                       "file:///etc/passwd", "javascript:alert(1)", "gs://bucket/a.jpg", "ftp://example.invalid/a", "//lh3.example/a",
                       "photos/a.jpg", "http://", "https://lh3.googleusercontent.com/a/" + String(repeating: "A", count: 100_000)]
        var urls = hostile
        for _ in 0..<84 {
            var url = Array("https://lh3.googleusercontent.com/a-/AOh14Gi0=s96-c".utf8)
            for _ in 0..<(1 + random.below(4)) { url[random.below(url.count)] = random.byte() | 0x20 }
            urls.append(String(decoding: url, as: UTF8.self))
        }
        let policy = NetworkPolicy(allowPrivateNetworks: false) { host in [NetworkPolicy.Address(literal: host) ?? NetworkPolicy.Address(literal: "10.1.2.3")!] }
        var refused = 0, readerReported = 0, allowed: [String] = []
        for (index, url) in urls.enumerated() {
            let card = "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Grace Hopper\r\nPHOTO;VALUE=uri:\(url)\r\nEND:VCARD\r\n"
            let result = try read(Array(card.utf8), "url-\(index).vcf")
            guard let link = result.profiles.first?.photoURL else { readerReported += 1; continue }
            do {
                try await policy.checkAddresses(of: try policy.checkedURL(link))
                allowed.append(link)
            } catch is SourceFailure { refused += 1 }
        }
        #expect(allowed.isEmpty, "\(allowed)")
        #expect(refused + readerReported == urls.count && refused > 0 && readerReported > 0)
        HostileLedger.record("inputs", "vCard photos: bare base64 and URLs",
                             tried: "\(iterations) mutants of a bare-base64 photo (Thunderbird's 3.0 form, 2.1's bare B: flips, cuts, colons, line ends, blanks, NUL), seed 38; \(urls.count) photo URLs (private, metadata, loopback, IPv4-mapped, hex and decimal IPv4, internal names, file:, javascript:, gs:, relative, a 100 KB URL, mutated Google photo URLs)",
                             count: iterations + urls.count,
                             outcome: "no crash, no hang (slowest \(String(format: "%.2f", slowest)) s): \(decoded) photos decoded, \(refusedImages) refused by the decoder, \(reported) reported by the reader; URLs: \(readerReported) reported by the reader, \(refused) refused by the network policy before any connection, 0 allowed")
    }
}
