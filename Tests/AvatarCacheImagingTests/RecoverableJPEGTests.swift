import Foundation
import Testing
@testable import AvatarCacheImaging
import AvatarCacheImagingTestSupport
import AvatarCacheTestKit

/// Issue 37, class 4: a JPEG with damage libjpeg recovers from (stray bytes before a
/// marker, a data segment cut short inside the file) is decoded as every browser shows
/// it (the run's report saying so: the end-to-end RecoveredJPEGReportTests); a file cut
/// short still fails (nothing half-decoded).
@Suite struct RecoverableJPEGTests {
    let renderer = AvatarRenderer(tiers: [330, 110], maxPixels: 50_000_000)

    /// The sample photo: 2,508 bytes, its scan from byte 591 to the end-of-image marker.
    func photo(_ name: String = "chelsea.jpg") throws -> [UInt8] { try Fixtures.photo(name) }

    @Test func strayBytesBeforeAMarkerGiveThePictureAndAWarning() throws {
        var bytes = try photo()
        let sos = SampleImages.jpegScanDataOffset(bytes) - 14   // the SOS marker itself (its header is 12 bytes + FF DA)
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
        let start = SampleImages.jpegScanDataOffset(whole)
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

}
