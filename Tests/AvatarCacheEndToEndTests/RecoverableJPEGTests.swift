import Foundation
import Testing
@testable import AvatarCacheImaging
import AvatarCacheTestKit

/// Issue 37, class 4: a JPEG with damage libjpeg recovers from (stray bytes before a
/// marker, a data segment cut short inside the file) is decoded as every browser shows
/// it, and the report says so; a file cut short still fails (nothing half-decoded).
@Suite struct RecoverableJPEGTests {
    let renderer = AvatarRenderer(tiers: [330, 110], maxPixels: 50_000_000)

    /// The sample photo: 2,508 bytes, its scan from byte 591 to the end-of-image marker.
    func photo(_ name: String = "chelsea.jpg") throws -> [UInt8] { try Fixtures.photo(name) }

    /// The offset of the first start-of-scan marker's data (after its header).
    func scanData(_ bytes: [UInt8]) -> Int {
        var index = 2
        while index + 3 < bytes.count {
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            if bytes[index + 1] == 0xDA { return index + 2 + length }
            index += 2 + length
        }
        return bytes.count
    }

    @Test func strayBytesBeforeAMarkerGiveThePictureAndAWarning() throws {
        var bytes = try photo()
        let sos = scanData(bytes) - 14   // the SOS marker itself (its header is 12 bytes + FF DA)
        bytes.insert(contentsOf: [0x00, 0x13, 0x37], at: sos)
        #expect(bytes.withUnsafeBytes(JPEGStructure.hasEndOfImage))
        let avatar = try renderer.render(bytes)
        #expect(avatar.tiers.count == 2)
        #expect(avatar.warning?.contains("extraneous bytes before marker") == true, "\(String(describing: avatar.warning))")
        // The same file whole decodes without a warning.
        #expect(try renderer.render(try photo()).warning == nil)
    }

    @Test func aDataSegmentCutShortInsideTheFileStillDecodes() throws {
        let whole = try photo()
        let start = scanData(whole)
        // Half the entropy-coded data gone, the end-of-image marker kept.
        var bytes = Array(whole[..<(start + (whole.count - start) / 2)])
        bytes += [0xFF, 0xD9]
        #expect(bytes.withUnsafeBytes(JPEGStructure.hasEndOfImage))
        let avatar = try renderer.render(bytes)
        #expect(avatar.warning?.contains("premature end of data segment") == true, "\(String(describing: avatar.warning))")
    }

    @Test func aFileCutShortStillFailsAsInvalid() throws {
        let whole = try photo()
        let bytes = Array(whole[..<(whole.count * 2 / 3)])
        #expect(!bytes.withUnsafeBytes(JPEGStructure.hasEndOfImage))
        #expect {
            try renderer.render(bytes)
        } throws: { error in
            guard case ImagingError.invalidImage = error else { return false }
            return true
        }
        // An EXIF thumbnail's end marker inside APP1 does not make a truncated file whole.
        let withThumbnail = try photo("coffee-rotated.jpg")
        #expect(withThumbnail.withUnsafeBytes(JPEGStructure.hasEndOfImage))
        let cut = Array(withThumbnail[..<(withThumbnail.count - 100)])
        #expect(!cut.withUnsafeBytes(JPEGStructure.hasEndOfImage))
    }

    @Test func theRunReportsWhatItRecoveredFrom() throws {
        let directory = try Fixtures.temporaryDirectory("recovered")
        defer { try? FileManager.default.removeItem(at: directory) }
        var damaged = try photo()
        damaged.insert(contentsOf: [0x00, 0x13, 0x37], at: scanData(damaged) - 14)
        let server = try FixtureServer(routes: ["/damaged.jpg": .ok(bytes: damaged)])
        defer { server.shutdown() }
        let export = try Fixtures.writeUsersExport([(id: "1", name: "Dam Aged", url: server.url("/damaged.jpg"))], in: directory)
        let report = directory.appendingPathComponent("report.json").path
        let result = try Binary.run(["warm", export, "--cache", directory.appendingPathComponent("cache").path,
                                       "--allow-private-networks", "--report", report])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("source decoded past damage"), "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any])
        #expect(json["decoded"] as? Int == 1 && json["failed"] as? Int == 0)
        #expect(json["recoveredImages"] as? Int == 1)
        #expect(((json["recoveredImageDetails"] as? [[String: Any]])?.first?["reason"] as? String)?.contains("extraneous bytes") == true)
    }
}
