import Foundation
import Testing
@testable import AvatarCacheImaging
import AvatarCacheSupport
import AvatarCacheImagingTestSupport

/// Issue 37, class 3: old Mac OS X Address Book exports carry their photos as TIFF
/// (`PHOTO;BASE64:` with `MM\0*` bytes, no TYPE). Inline TIFF is decoded; a downloaded one
/// is refused before any loader sees it (libtiff is a larger attack surface, and no photo
/// service serves TIFF).
@Suite struct InlineTIFFTests {
    @Test func anInlineTIFFIsDecodedADownloadedOneRefused() throws {
        let bytes = SampleImages.addressBookTIFF()
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
}
