import Foundation
import Testing
@testable import AvatarCache
@testable import AvatarCacheLookup

/// Seeded fuzz of the formats this round added: inline TIFF (libtiff, reached only for
/// photos an export carries), Firestore's LevelDB logs and entities, the Auth CSV, and
/// bare-base64 and URL photos in vCards. Every mutant either reads or is refused with a
/// reason; none crashes or hangs (each is timed).
@Suite struct HostileNewFormatsTests {
    @Test func seededFuzzOfInlineTIFF() throws {
        var random = SeededRandom(seed: 37)
        let renderer = AvatarRenderer(tiers: [330, 110], maxPixels: 50_000_000)
        let original = InlineTIFFTests.tiff(width: 96, height: 64)
        var decoded = 0, refused = 0, slowest = 0.0
        let iterations = 300
        for iteration in 0..<iterations {
            var bytes = original
            switch iteration % 4 {
            case 0: for _ in 0..<(1 + random.below(8)) { bytes[random.below(bytes.count)] ^= random.byte() }   // bit flips anywhere
            case 1: bytes = Array(bytes.prefix(random.below(bytes.count)))                                      // cut short
            case 2:                                                                                                 // an IFD entry's value replaced
                let entry = 10 + 12 * random.below(10) + 8
                for k in 0..<4 { bytes[entry + k] = random.byte() }
            default:                                                                                                // the header's IFD offset
                for k in 4..<8 { bytes[k] = random.byte() }
            }
            let started = Date()
            do {
                _ = try renderer.render(bytes, inline: true)
                decoded += 1
            } catch is ImagingError {
                refused += 1
            }
            slowest = max(slowest, Date().timeIntervalSince(started))
        }
        #expect(decoded + refused == iterations)
        #expect(slowest < 5, "slowest mutant \(slowest) s")
        HostileLedger.record("images", "inline TIFF fuzz", tried: "\(iterations) mutants of an Address Book-style TIFF (bit flips, cuts, IFD values, IFD offset), seed 37, rendered as inline photos",
                             count: iterations, outcome: "no crash, no hang (slowest \(String(format: "%.2f", slowest)) s): \(decoded) decoded, \(refused) refused (invalidImage, tooManyPixels, unsupportedFormat)")
    }

    @Test func seededFuzzOfFirestoreExportsAndAuthCSV() throws {
        var random = SeededRandom(seed: 36)
        let directory = try Fixtures.temporaryDirectory("firestore-fuzz")
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = Fixtures.repositoryRoot.appendingPathComponent("Tests/AvatarCacheTests/Fixtures/firebase/ember-cloud-firestore-adapter").path
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
}
