import Foundation
import Testing
@testable import AvatarCacheImaging
@testable import AvatarCacheSupport
import AvatarCacheTestKit

/// Issue 37, class 3: old Mac OS X Address Book exports carry their photos as TIFF
/// (`PHOTO;BASE64:` with `MM\0*` bytes, no TYPE). Inline TIFF is decoded; a downloaded one
/// is refused before any loader sees it (libtiff is a larger attack surface, and no photo
/// service serves TIFF).
@Suite struct InlineTIFFTests {
    /// A baseline TIFF as Address Book wrote them: big-endian ("MM"), RGB, 8 bits a sample,
    /// one uncompressed strip; `width` × `height` of a gradient.
    static func tiff(width: Int = 64, height: Int = 48) -> [UInt8] {
        var bytes: [UInt8] = Array("MM".utf8) + [0x00, 0x2A]
        func u16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        func u32(_ value: Int) -> [UInt8] { [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        let entries = 10
        let ifd = 8
        let bitsAt = ifd + 2 + entries * 12 + 4
        let pixelsAt = bitsAt + 6
        bytes += u32(ifd)
        bytes += u16(entries)
        func entry(_ tag: Int, _ type: Int, _ count: Int, _ value: [UInt8]) -> [UInt8] {
            u16(tag) + u16(type) + u32(count) + value + [UInt8](repeating: 0, count: 4 - value.count)
        }
        bytes += entry(256, 3, 1, u16(width))                // ImageWidth
        bytes += entry(257, 3, 1, u16(height))               // ImageLength
        bytes += entry(258, 3, 3, u32(bitsAt))               // BitsPerSample 8, 8, 8
        bytes += entry(259, 3, 1, u16(1))                    // Compression: none
        bytes += entry(262, 3, 1, u16(2))                    // Photometric: RGB
        bytes += entry(273, 4, 1, u32(pixelsAt))             // StripOffsets
        bytes += entry(277, 3, 1, u16(3))                    // SamplesPerPixel
        bytes += entry(278, 3, 1, u16(height))               // RowsPerStrip
        bytes += entry(279, 4, 1, u32(width * height * 3))   // StripByteCounts
        bytes += entry(284, 3, 1, u16(1))                    // PlanarConfiguration: chunky
        bytes += u32(0)
        bytes += u16(8) + u16(8) + u16(8)
        for y in 0..<height {
            for x in 0..<width { bytes += [UInt8(x * 255 / width), UInt8(y * 255 / height), 160] }
        }
        return bytes
    }

    @Test func anInlineTIFFIsDecodedADownloadedOneRefused() throws {
        let bytes = Self.tiff()
        #expect(bytes.withUnsafeBytes(ImageFormat.sniff) == .tiff)
        let renderer = AvatarRenderer(tiers: [330, 110], maxPixels: 50_000_000)
        let avatar = try renderer.render(bytes, inline: true)
        #expect(avatar.format == .tiff && avatar.sourceWidth == 64 && avatar.tiers.first?.side == 48)
        #expect {
            try renderer.render(bytes)
        } throws: { error in
            guard case ImagingError.unsupportedFormat(let what) = error else { return false }
            return what.contains("TIFF image")
        }
        // The pixel limit holds for TIFF too, from its header.
        #expect(throws: ImagingError.self) { try AvatarRenderer(tiers: [110], maxPixels: 1000).render(bytes, inline: true) }
    }

    @Test func anAddressBookCardWithATIFFShowsItsPhotoAndTheSameTIFFDownloadedFails() throws {
        let directory = try Fixtures.temporaryDirectory("tiff")
        defer { try? FileManager.default.removeItem(at: directory) }
        let bytes = Self.tiff()
        // Mac OS X Address Book's form: `PHOTO;BASE64:` on its own line, the data folded below.
        var folded = ""
        for (index, character) in Data(bytes).base64EncodedString().enumerated() {
            if index % 76 == 0 { folded += "\r\n  " }
            folded.append(character)
        }
        let card = "BEGIN:VCARD\r\nVERSION:3.0\r\nN:Appleseed;Johnny;;;\r\nFN:Johnny Appleseed\r\nPHOTO;BASE64:\(folded)\r\nEND:VCARD\r\n"
        let cardPath = directory.appendingPathComponent("address-book.vcf").path
        try Data(card.utf8).write(to: URL(fileURLWithPath: cardPath))
        let server = try FixtureServer(routes: ["/photo.tiff": .ok(bytes: Self.tiff(width: 40, height: 40))])
        defer { server.shutdown() }
        let users = try Fixtures.writeUsersExport([(id: "web", name: "Web User", url: server.url("/photo.tiff"))], in: directory)
        let report = directory.appendingPathComponent("report.json").path
        let result = try Binary.run(["warm", users, cardPath, "--cache", directory.appendingPathComponent("cache").path,
                                       "--allow-private-networks", "--report", report])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any])
        #expect(json["inlinePhotos"] as? Int == 1 && json["profilesWithPhoto"] as? Int == 1, "\(json)")
        #expect(json["failuresByClass"] as? [String: Int] == ["unsupportedFormat": 1])
        let failure = try #require((json["failures"] as? [[String: Any]])?.first)
        #expect((failure["reason"] as? String)?.contains("TIFF image") == true, "\(failure)")
    }
}
