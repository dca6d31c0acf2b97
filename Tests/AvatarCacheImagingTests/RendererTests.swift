import CVipsShim
import CVipsShimTesting
import Foundation
import Testing
@testable import AvatarCacheImaging
import AvatarCacheImagingTestSupport
@testable import AvatarCacheSupport
import AvatarCacheTestKit

@Suite struct RendererTests {
    let renderer = AvatarRenderer(tiers: [330, 900], maxPixels: 50_000_000)

    @Test func bothTiersFromALargeSource() throws {
        let avatar = try renderer.render(try Fixtures.photo("retina.jpg"))
        #expect(avatar.format == .jpeg)
        #expect(avatar.sourceWidth == 1411 && avatar.sourceHeight == 1411)
        #expect(avatar.tiers.map(\.tier) == [330, 900])
        #expect(avatar.tiers.map(\.side) == [330, 900])
        for tier in avatar.tiers {
            let pixels = try Pixels(decoding: tier.bytes)
            #expect(pixels.width == tier.side && pixels.height == tier.side)
            #expect(pixels.bands == 3)
        }
    }

    @Test func aSmallSourceIsNeverUpscaled() throws {
        let hubble = try renderer.render(try Fixtures.photo("hubble.jpg"))   // 1000×872
        #expect(hubble.tiers.map(\.side) == [330, 872])
        let tiny = try renderer.render(try Fixtures.photo("chelsea-96.jpg")) // 96×64
        #expect(tiny.tiers.map(\.side) == [64, 64])
        let decoded = try Pixels(decoding: tiny.tiers[1].bytes)
        #expect(decoded.width == 64 && decoded.height == 64)
    }

    @Test func exifOrientationIsApplied() throws {
        // coffee-rotated.jpg holds the coffee photo turned 90° anticlockwise with
        // EXIF Orientation 6: once oriented it must match the upright coffee.jpg.
        let upright = try Pixels(decoding: renderer.render(try Fixtures.photo("coffee.jpg")).tiers[0].bytes)
        let rotated = try Pixels(decoding: renderer.render(try Fixtures.photo("coffee-rotated.jpg")).tiers[0].bytes)
        let side = upright.width
        let sameWay = rotated.meanDifference(upright)
        let turned = rotated.meanDifference(upright) { x, y in (y, side - 1 - x) }
        #expect(sameWay < 8, "oriented output should match the upright photo (mean difference \(sameWay))")
        #expect(turned > sameWay * 3, "output still looks rotated (\(turned) vs \(sameWay))")
    }

    @Test func centreCropKeepsTheMiddle() throws {
        // The crop of a landscape 600×400 photo is its middle 400×400.
        let avatar = try AvatarRenderer(tiers: [400], maxPixels: 50_000_000).render(try Fixtures.photo("coffee.jpg"))
        #expect(avatar.tiers[0].side == 400)
        #expect(avatar.sourceWidth == 600 && avatar.sourceHeight == 400)
    }

    @Test func metadataIsStripped() throws {
        let avatar = try renderer.render(try Fixtures.photo("coffee-rotated.jpg"))
        for tier in avatar.tiers {
            // No APP1 (EXIF/XMP) or COM segment in the output.
            #expect(!containsMarker(tier.bytes, 0xE1))
            #expect(!containsMarker(tier.bytes, 0xFE))
        }
    }

    @Test(arguments: ["chelsea-disc.png", "chelsea-disc.webp"])
    func transparencyBecomesWhiteNotBlack(name: String) throws {
        // A disc on a transparent square whose hidden pixels are brown: in JPEG the
        // corners must come out white (not black, not brown), the centre the cat.
        let source = try Fixtures.photo(name)
        #expect(try Pixels(decoding: source).bands == 4, "the fixture has alpha")
        let avatar = try renderer.render(source)
        let pixels = try Pixels(decoding: avatar.tiers[0].bytes)
        #expect(pixels.bands == 3)
        for (x, y) in [(0, 0), (pixels.width - 1, 0), (0, pixels.height - 1), (pixels.width - 1, pixels.height - 1)] {
            #expect(pixels.pixel(x, y).allSatisfy { $0 > 240 }, "corner \(x),\(y) is \(pixels.pixel(x, y))")
        }
        #expect(!pixels.pixel(pixels.width / 2, pixels.height / 2).allSatisfy { $0 > 240 }, "the centre is the photo")
    }

    @Test func cmykJPEGComesOutInTheRightColours() throws {
        let cmyk = try Fixtures.photo("coffee-cmyk.jpg")
        let fromCMYK = try Pixels(decoding: renderer.render(cmyk).tiers[0].bytes)
        let fromRGB = try Pixels(decoding: renderer.render(try Fixtures.photo("coffee.jpg")).tiers[0].bytes)
        #expect(fromCMYK.bands == 3)
        // The round trip through CMYK loses some gamut (darker, deeper reds): measured
        // 13.3 levels on average from the RGB original. A wrong conversion is far worse:
        // ignoring the profile and inverting the ink (R = (255−C)(255−K)/255 …) is the
        // "naive" one below.
        let difference = fromCMYK.meanDifference(fromRGB)
        #expect(difference < 20, "CMYK through its profile should match the RGB original (mean difference \(difference))")
        let ink = try Pixels.rawCentre(ofJPEG: cmyk, side: 330)
        #expect(ink.bands == 4, "the source really is 4-band CMYK")
        var naive = fromRGB
        for index in 0..<(naive.width * naive.height) {
            let k = 255 - Int(ink.data[index * 4 + 3])
            for band in 0..<3 { naive.data[index * 3 + band] = UInt8((255 - Int(ink.data[index * 4 + band])) * k / 255) }
        }
        #expect(fromCMYK.meanDifference(naive) > difference, "closer to the original than a profile-less conversion")
    }

    /// HEIC goes through libheif directly (not heifload): the same picture as the JPEG
    /// it was made from (`vips copy chelsea.jpg chelsea.heic[Q=60,strip]`), at its size.
    @Test func heicIsDecodedByLibheifToTheSamePicture() throws {
        let heic = try [UInt8](Data(contentsOf: Fixtures.repositoryRoot
            .appendingPathComponent("Tests/Fixtures/photos/chelsea.heic")))
        let avatar = try renderer.render(heic)
        #expect(avatar.format == .heif)
        #expect(avatar.sourceWidth == 451 && avatar.sourceHeight == 300)
        #expect(avatar.tiers.map(\.side) == [300, 300])
        let fromHEIC = try Pixels(decoding: avatar.tiers[1].bytes)
        let fromJPEG = try Pixels(decoding: renderer.render(try Fixtures.photo("chelsea.jpg")).tiers[1].bytes)
        #expect(fromHEIC.bands == 3)
        let difference = fromHEIC.meanDifference(fromJPEG)
        #expect(difference < 6, "HEIC and JPEG of one photo differ by \(difference) levels on average")
        // Mirrored, it would be far off: the comparison can tell a wrong picture.
        #expect(fromHEIC.meanDifference(fromJPEG, transform: { (299 - $0, $1) }) > difference * 2)

        // Damaged: cut in half, or over the pixel limit. An error, never a picture.
        #expect(throws: ImagingError.self) { try renderer.render(Array(heic.prefix(heic.count / 2))) }
        #expect(throws: ImagingError.self) { try AvatarRenderer(tiers: [330], maxPixels: 451 * 300 - 1).render(heic) }
    }

    /// A HEIC through the shim's libheif decoder: whole, or its centre square at half size
    /// from `halfFrom` up; its HEVC picture by `decoder` (libheif's own by default, else
    /// ours with libde265 or libavcodec) on `threads` threads.
    static func decodeHEIC(_ bytes: [UInt8], halfFrom: Int32, decoder: Int32 = CVIPSSHIM_HEVC_LIBHEIF, threads: Int32 = 1) throws
        -> (pixels: Pixels, shownWidth: Int32, shownHeight: Int32) {
        var coded: (Int32, Int32) = (0, 0), shown: (Int32, Int32) = (0, 0)
        let image = try bytes.withUnsafeBytes { raw in
            try VipsImageRef.make("heif") {
                cvipsshim_heif_decode_square(raw.baseAddress, raw.count, 1 << 30, halfFrom, decoder, threads,
                                             $0, &coded.0, &coded.1, &shown.0, &shown.1, nil)
            }
        }
        return (try Pixels(image), shown.0, shown.1)
    }

    /// FFmpeg's HEVC decoder (libavcodec, which scripts/setup installs and the package
    /// depends on) is found, really decodes, and gives libheif's own decoder's pixels:
    /// 4:2:0 with an odd width (a conformance window), 4:4:4, 10 bits, and an alpha
    /// plane (a second, monochrome picture), on 1 to 3 threads, whole and as the half
    /// square; a damaged file is still an error. A plain 4:2:0 picture (one coded image, no
    /// grid, no transformation) gives the half square straight from the decoder's planes,
    /// without libheif's RGB round trip: the same pixels as libde265 through the same
    /// path, and within rounding of libheif's.
    @Test func aHEICDecodedByLibavcodecIsTheSamePicture() throws {
        try Vips.initialise()
        #expect(cvipsshim_hevc_libavcodec_available() == 1, "libavcodec.so.59 with an HEVC decoder was not found")
        for name in ["chelsea.heic", "chelsea-444.heic", "chelsea-10bit.heic", "chelsea-alpha.heic", "chelsea-plain.heic",
                     "chelsea-plain-444.heic"] {
            let heic = try [UInt8](Data(contentsOf: Fixtures.repositoryRoot
                .appendingPathComponent("Tests/Fixtures/photos/\(name)")))
            let pictures = name == "chelsea-alpha.heic" ? 2 : 1
            // A plain 4:4:4 picture is not taken for the straight path (its 'hvcC' says so):
            // decoded once, not captured and then decoded again.
            for halfFrom: Int32 in ["chelsea.heic", "chelsea-plain.heic", "chelsea-plain-444.heic"].contains(name) ? [0, 100] : [0] {
                let straight = name == "chelsea-plain.heic" && halfFrom > 0
                let own = try Self.decodeHEIC(heic, halfFrom: halfFrom).pixels
                #expect(own.bands == (pictures == 2 ? 4 : 3))
                var reference = own
                if straight {
                    let captured = cvipsshim_hevc_captured_pictures()
                    reference = try Self.decodeHEIC(heic, halfFrom: halfFrom, decoder: CVIPSSHIM_HEVC_LIBDE265).pixels
                    #expect(cvipsshim_hevc_captured_pictures() - captured == 1, "libde265's planes did not go straight to the square")
                    #expect(reference.width == own.width && reference.height == own.height && reference.bands == own.bands)
                    // libheif converts to RGB 4:4:4 and back to 4:2:0 first: rounding only.
                    let difference = reference.meanDifference(own)
                    #expect(difference < 0.05, "\(name): the straight square is \(difference) from libheif's on average")
                }
                for threads: Int32 in [1, 2, 3] {
                    let before = cvipsshim_hevc_libavcodec_pictures(), captured = cvipsshim_hevc_captured_pictures()
                    let ffmpeg = try Self.decodeHEIC(heic, halfFrom: halfFrom, decoder: CVIPSSHIM_HEVC_LIBAVCODEC, threads: threads).pixels
                    #expect(cvipsshim_hevc_libavcodec_pictures() - before == pictures, "\(name): libavcodec did not decode")
                    #expect(cvipsshim_hevc_captured_pictures() - captured == (straight ? 1 : 0), "\(name), half square from \(halfFrom)")
                    #expect(ffmpeg.width == reference.width && ffmpeg.height == reference.height && ffmpeg.bands == reference.bands)
                    // A Bool, not the arrays: on a mismatch Swift Testing would diff 68,000 bytes.
                    let same = ffmpeg.data == reference.data
                    #expect(same, "\(name), \(threads) threads, half square from \(halfFrom): pixels differ")
                }
            }
            #expect(throws: ImagingError.self) {
                try Self.decodeHEIC(Array(heic.prefix(heic.count * 3 / 4)), halfFrom: 0, decoder: CVIPSSHIM_HEVC_LIBAVCODEC, threads: 2)
            }
            #expect(throws: ImagingError.self) {
                try Self.decodeHEIC(Array(heic.prefix(heic.count * 3 / 4)), halfFrom: 100, decoder: CVIPSSHIM_HEVC_LIBAVCODEC, threads: 2)
            }
        }
    }

    /// libde265 on several worker threads (our decoder plugin) decodes exactly the picture
    /// libheif's own one-thread decoder does, whole and as the half-size square, and is
    /// really the one used; a damaged file is still an error.
    @Test func aHEICDecodedOnSeveralThreadsIsTheSamePicture() throws {
        try Vips.initialise()
        let heic = try [UInt8](Data(contentsOf: Fixtures.repositoryRoot
            .appendingPathComponent("Tests/Fixtures/photos/chelsea.heic")))
        func decode(_ bytes: [UInt8], halfFrom: Int32, threads: Int32) throws -> Pixels {
            try Self.decodeHEIC(bytes, halfFrom: halfFrom, decoder: CVIPSSHIM_HEVC_LIBDE265, threads: threads).pixels
        }
        for halfFrom: Int32 in [0, 100] {
            let before = cvipsshim_hevc_pictures()
            let own = try Self.decodeHEIC(heic, halfFrom: halfFrom).pixels
            #expect(cvipsshim_hevc_pictures() == before, "libheif's own decoder went through the plugin")
            for threads: Int32 in [1, 2, 3] {
                let several = try decode(heic, halfFrom: halfFrom, threads: threads)
                #expect(several.width == own.width && several.height == own.height && several.bands == own.bands)
                let same = several.data == own.data
                #expect(same, "\(threads) threads, half square from \(halfFrom): pixels differ")
            }
            #expect(cvipsshim_hevc_pictures() - before == 3, "the plugin decoded \(cvipsshim_hevc_pictures() - before) pictures")
        }
        #expect(throws: ImagingError.self) { try decode(Array(heic.prefix(heic.count * 3 / 4)), halfFrom: 0, threads: 2) }
    }

    /// A large HEIC's centre square comes at half size straight from its YCbCr planes:
    /// the same colours as libheif's own RGB conversion averaged over 2x2 blocks (its
    /// matrix and range), and the whole image when half the square would be too small.
    @Test func aHEICsCentreSquareAtHalfSizeMatchesLibheifsConversion() throws {
        try Vips.initialise()
        let heic = try [UInt8](Data(contentsOf: Fixtures.repositoryRoot
            .appendingPathComponent("Tests/Fixtures/photos/chelsea.heic")))
        func decode(halfFrom: Int32) throws -> (Pixels, Int32, Int32) {
            let decoded = try Self.decodeHEIC(heic, halfFrom: halfFrom)
            return (decoded.pixels, decoded.shownWidth, decoded.shownHeight)
        }
        let (full, fullWidth, fullHeight) = try decode(halfFrom: 0)
        #expect(full.width == 451 && full.height == 300 && fullWidth == 451 && fullHeight == 300)
        #expect(try decode(halfFrom: 151).0.width == 451, "half the square (150) is under 151: the whole image")
        let (half, shownWidth, shownHeight) = try decode(halfFrom: 150)
        // The exact square starts at column 75, between two blocks: the blocks it touches
        // (from column 74, 151 of them) come back, for the exact resample to take it.
        #expect(half.width == 151 && half.height == 150 && half.bands == 3 && shownWidth == 451 && shownHeight == 300)
        var square: [Double] = [0, 0, 0]
        var coded: (Int32, Int32) = (0, 0), shown: (Int32, Int32) = (0, 0)
        _ = try heic.withUnsafeBytes { raw in
            try VipsImageRef.make("heif") {
                cvipsshim_heif_decode_square(raw.baseAddress, raw.count, 1 << 30, 150, CVIPSSHIM_HEVC_LIBHEIF, 1,
                                             $0, &coded.0, &coded.1, &shown.0, &shown.1, &square)
            }
        }
        #expect(square == [0.5, 0, 150], "\(square)")
        // The reference: libheif's RGB, the same blocks (from an even column), 2x2 means.
        var expected = Pixels(width: 150, height: 150, bands: 3, data: [UInt8](repeating: 0, count: 150 * 150 * 3))
        let left = ((451 - 300) / 2) & ~1
        var largest = 0
        for y in 0..<150 {
            for x in 0..<150 {
                for band in 0..<3 {
                    var sum = 0
                    for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] { sum += Int(full.pixel(left + 2 * x + dx, 2 * y + dy)[band]) }
                    expected.data[(y * 150 + x) * 3 + band] = UInt8((sum + 2) / 4)
                    largest = max(largest, abs(Int(half.pixel(x, y)[band]) - (sum + 2) / 4))
                }
            }
        }
        let difference = half.meanDifference(expected, width: 150)
        #expect(difference < 0.75 && largest <= 4, "\(difference) levels apart on average, \(largest) at most")
        // A wrong matrix or range would be far off: the comparison can tell.
        var swapped = expected
        for index in stride(from: 0, to: swapped.data.count, by: 3) { swapped.data.swapAt(index, index + 2) }
        #expect(half.meanDifference(swapped, width: 150) > difference * 4)
    }

    /// A progressive JPEG decoded with its coefficients kept compactly gives exactly the
    /// pixels of libjpeg's own whole-image arrays, at every DCT scale (1/8 … 8/8, where
    /// the reduced 2x2 and 4x4 transforms read other coefficients than the N x N ones), at 4:4:4
    /// and 4:2:0, in grey and in CMYK; and the store is used exactly where it saves.
    @Test(arguments: ["astronaut-progressive.jpg", "coffee-444-progressive.jpg", "coffee-cmyk-progressive.jpg",
                      "camera-grey-progressive.jpg", "hubble-progressive.jpg"])
    func aProgressiveJPEGsCompactCoefficientsGiveTheSamePixels(_ name: String) throws {
        try Vips.initialise()
        let bytes = try [UInt8](Data(contentsOf: Fixtures.repositoryRoot
            .appendingPathComponent("Tests/Fixtures/photos/\(name)")))
        let header = try bytes.withUnsafeBytes { raw in
            try VipsImageRef.make("jpegload") { cvipsshim_jpegload_buffer(raw.baseAddress, raw.count, 1, $0) }
        }
        let shortSide = min(header.width, header.height)
        for scale in 1...8 {
            let target = (shortSide * scale + 7) / 8   // the smallest target that needs this scale
            func decode(compact: Int32) throws -> Pixels {
                var out: UnsafeMutablePointer<VipsImage>?
                let status = bytes.withUnsafeBytes { cvipsshim_jpeg_decode_centre($0.baseAddress, $0.count, Int32(target), compact, nil, &out) }
                guard status == CVIPSSHIM_OK, let out else { throw ImagingError.library(Vips.takeErrorMessage()) }
                return try Pixels(VipsImageRef(out))
            }
            let packedBefore = cvipsshim_jpeg_compact_rows_packed()
            let compact = try decode(compact: 1)
            let packed = cvipsshim_jpeg_compact_rows_packed() - packedBefore
            let whole = try decode(compact: 0)
            // Used wherever a component's transform reads fewer than all 64 coefficients
            // of a block: below 8/8 (at 8/8 every component's reads all of them).
            #expect((packed > 0) == (scale < 8), "\(name) at \(scale)/8: \(packed) rows packed")
            #expect(cvipsshim_jpeg_compact_rows_packed() - packedBefore == packed, "libjpeg's own arrays went through the store")
            // The decoded pixels the exact square touches: its side, rounded up, or one more.
            let side = (shortSide * scale + 7) / 8
            #expect(compact.width == whole.width && compact.height == whole.height
                    && (side...side + 1).contains(compact.width) && (side...side + 1).contains(compact.height))
            let firstDifference = compact.data.count != whole.data.count ? 0 : compact.data.indices.first { compact.data[$0] != whole.data[$0] }
            #expect(firstDifference == nil, "\(name) at \(scale)/8: pixels differ from byte \(firstDifference ?? 0)")
        }
    }

    /// Embedded profiles go through one cached 8-bit lcms transform; libvips'
    /// icc_transform (through Lab floats) is the reference it must agree with.
    @Test func theDirectICCTransformAgreesWithLibvips() throws {
        try Vips.initialise()
        let cmyk = try Fixtures.photo("coffee-cmyk.jpg")
        let (direct, reference) = try cmyk.withUnsafeBytes { raw in
            let image = try VipsImageRef.make("jpegload") { cvipsshim_jpegload_buffer(raw.baseAddress, raw.count, 1, $0) }
            #expect(image.bands == 4 && image.hasICCProfile)
            let direct = try image.apply("icc") { cvipsshim_icc_to_srgb8($0, $1) }
            var reference = try image.apply("icc_transform") { cvipsshim_icc_transform_srgb($0, $1) }
            reference = try reference.apply("cast") { cvipsshim_cast_uchar($0, $1) }
            return (try Pixels(direct), try Pixels(reference))
        }
        #expect(direct.bands == 3 && direct.width == 600 && direct.height == 400)
        let difference = direct.meanDifference(reference)
        #expect(difference < 0.05, "lcms' 8-bit transform and libvips' differ by \(difference) levels on average")
        // The same transform again (now from the cache) gives the same pixels.
        let again = try cmyk.withUnsafeBytes { raw in
            let image = try VipsImageRef.make("jpegload") { cvipsshim_jpegload_buffer(raw.baseAddress, raw.count, 1, $0) }
            return try Pixels(try image.apply("icc") { cvipsshim_icc_to_srgb8($0, $1) })
        }
        #expect(again.data == direct.data)
    }

    @Test func animatedGIFGivesItsFirstFrame() throws {
        // Frame 1 is the cat (mostly brown/grey), frame 2 the coffee (red saucer).
        let avatar = try renderer.render(try Fixtures.photo("animated.gif"))
        #expect(avatar.sourceWidth == 200 && avatar.sourceHeight == 200, "one frame, not the strip of two")
        let frame = try Pixels(decoding: avatar.tiers[0].bytes)
        #expect(frame.width == 200 && frame.height == 200)
        let chelsea = try Pixels(decoding: AvatarRenderer(tiers: [200], maxPixels: 1_000_000).render(try Fixtures.photo("chelsea.jpg")).tiers[0].bytes)
        _ = chelsea
        let coffeeLike = try Pixels(decoding: AvatarRenderer(tiers: [200], maxPixels: 1_000_000).render(try Fixtures.photo("coffee.jpg")).tiers[0].bytes)
        #expect(frame.meanDifference(coffeeLike) > 20, "the output is not the second frame")
    }

    @Test func otherFormatsDecode() throws {
        for (name, format) in [("motorcycle.webp", ImageFormat.webp), ("camera.png", .png), ("coins.gif", .gif)] {
            let avatar = try renderer.render(try Fixtures.photo(name))
            #expect(avatar.format == format)
            let pixels = try Pixels(decoding: avatar.tiers[0].bytes)
            #expect(pixels.bands == 3, "\(name) should come out as sRGB")
        }
    }

    @Test func truncatedJPEGIsInvalid() throws {
        let bytes = try Fixtures.photo("astronaut.jpg")
        #expect(throws: ImagingError.self) {
            _ = try renderer.render(Array(bytes.prefix(bytes.count / 2)))
        }
        do {
            _ = try renderer.render(Array(bytes.prefix(bytes.count / 2)))
        } catch let error as ImagingError {
            guard case .invalidImage = error else { Issue.record("expected invalidImage, got \(error)"); return }
        }
    }

    @Test(arguments: [
        ("<svg xmlns=\"http://www.w3.org/2000/svg\"/>", "SVG image"),
        ("%PDF-1.4\n", "PDF document"),
        ("BM\u{0}\u{0}\u{0}\u{0}", "BMP image"),
        ("hello, not an image", "not a JPEG, PNG, WebP, GIF or HEIC/AVIF image"),
    ])
    func unsupportedFormatsAreRefusedUnparsed(body: String, what: String) throws {
        #expect(throws: ImagingError.unsupportedFormat(what)) {
            _ = try renderer.render(Array(body.utf8))
        }
    }

    @Test func pixelLimitIsCheckedFromTheHeader() throws {
        // A PNG header declaring 100,000 × 100,000 pixels and no data.
        let bomb = PNGBomb.make(width: 100_000, height: 100_000)
        #expect(throws: ImagingError.tooManyPixels(width: 100_000, height: 100_000, limit: 50_000_000)) {
            _ = try renderer.render(bomb)
        }
        let strict = AvatarRenderer(tiers: [330], maxPixels: 1000)
        #expect(throws: ImagingError.tooManyPixels(width: 512, height: 512, limit: 1000)) {
            _ = try strict.render(try Fixtures.photo("astronaut.jpg"))
        }
    }

    @Test func shrinkOnLoadNeverGoesBelowTheTarget() {
        #expect(AvatarRenderer.shrinkOnLoad(shortSide: 3000, target: 900, format: .jpeg) == 2)
        #expect(AvatarRenderer.shrinkOnLoad(shortSide: 3600, target: 900, format: .jpeg) == 4)
        #expect(AvatarRenderer.shrinkOnLoad(shortSide: 899, target: 900, format: .jpeg) == 1)
        #expect(AvatarRenderer.shrinkOnLoad(shortSide: 8000, target: 900, format: .png) == 1)
    }

    private func containsMarker(_ bytes: [UInt8], _ marker: UInt8) -> Bool {
        // Walk the JPEG segments up to the start of scan.
        var index = 2
        while index + 4 <= bytes.count, bytes[index] == 0xFF {
            let kind = bytes[index + 1]
            if kind == marker { return true }
            if kind == 0xDA { return false }
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            index += 2 + length
        }
        return false
    }
}

/// Events noted from several threads, in order.
private final class Events: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func note(_ event: String) { lock.withLock { list.append(event) } }
    var all: [String] { lock.withLock { list } }
}

@Suite struct DecodeMemoryGateTests {
    @Test func decodesOverTheBudgetWaitForOthers() throws {
        let gate = DecodeMemoryGate(budgetBytes: 100)
        let firstHolding = DispatchSemaphore(value: 0), releaseFirst = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        let events = Events()
        let note = events.note
        done.enter()
        Thread {
            gate.withReservation(80) {
                note("first in")
                firstHolding.signal()
                releaseFirst.wait()
                note("first out")
            }
            done.leave()
        }.start()
        firstHolding.wait()
        done.enter()
        Thread {
            gate.withReservation(50) { note("second in") }
            done.leave()
        }.start()
        // The second (80 + 50 > 100) must not start while the first holds its 80.
        Thread.sleep(forTimeInterval: 0.2)
        #expect(events.all == ["first in"])
        #expect(gate.reserved == 80)
        releaseFirst.signal()
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(events.all == ["first in", "first out", "second in"])
        #expect(gate.reserved == 0)
        // Larger than the whole budget: runs, alone.
        #expect(gate.withReservation(1_000) { gate.reserved } == 1_000)
    }

    /// On the decode pool a decode that does not fit does not hold its thread: a small
    /// one queued behind it runs beside the large one in progress, and the deferred one
    /// runs when its bytes fit. The pool counts its threads' waits by cause.
    @Test func aDecodeThatDoesNotFitLeavesItsThreadToOneThatDoes() async throws {
        let gate = DecodeMemoryGate(budgetBytes: 100)
        let pool = DecodeWorkerPool(threads: 2, gate: gate)
        defer { pool.shutdown() }
        let events = Events()
        // What the pool tells the downloads' backlog: its threads starve, or no longer.
        let told = Events()
        pool.tellStarving { starving, sequence in told.note("\(starving) \(sequence)") }
        let firstHolding = DispatchSemaphore(value: 0), releaseFirst = DispatchSemaphore(value: 0)
        let first = Task {
            try await pool.run {
                try gate.withReservationOrDeferral(80) {
                    events.note("large 1 in")
                    firstHolding.signal()
                    releaseFirst.wait()
                    events.note("large 1 out")
                }
            }
        }
        firstHolding.wait()
        let second = Task { try await pool.run { try gate.withReservationOrDeferral(80) { events.note("large 2 in") } } }
        // The second large one is deferred (80 + 80 > 100) and its thread is free again.
        try await Task.sleep(for: .milliseconds(100))
        let small = Task { try await pool.run { try gate.withReservationOrDeferral(10) { events.note("small in") } } }
        // Up to 2 s for the small one while the first large one holds its memory.
        for _ in 0..<200 where !events.all.contains("small in") { try await Task.sleep(for: .milliseconds(10)) }
        #expect(events.all == ["large 1 in", "small in"], "the small decode ran beside the large one: \(events.all)")
        // The free thread now waits with the deferred one queued: a wait for memory.
        let beforeMemoryWait = pool.idleSeconds
        try await Task.sleep(for: .milliseconds(150))
        let afterMemoryWait = pool.idleSeconds
        #expect(afterMemoryWait.noMemory - beforeMemoryWait.noMemory >= 0.1, "\(beforeMemoryWait) → \(afterMemoryWait)")
        #expect(told.all.last?.hasPrefix("true") == true, "the starving thread is told of: \(told.all)")
        releaseFirst.signal()
        try await first.value
        try await second.value
        try await small.value
        #expect(events.all == ["large 1 in", "small in", "large 1 out", "large 2 in"])
        #expect(gate.reserved == 0)
        // Nothing queued: both threads wait for work, and not for memory.
        let beforeWorkWait = pool.idleSeconds
        try await Task.sleep(for: .milliseconds(150))
        let afterWorkWait = pool.idleSeconds
        #expect(afterWorkWait.noWork - beforeWorkWait.noWork >= 0.2, "\(beforeWorkWait) → \(afterWorkWait)")
        #expect(afterWorkWait.noMemory - beforeWorkWait.noMemory < 0.05, "\(beforeWorkWait) → \(afterWorkWait)")
        // Starving, then fed, in order; waiting for work is not starving.
        let words = told.all
        #expect(words.count >= 2 && words.count % 2 == 0 && words.last?.hasPrefix("false") == true, "\(words)")
        #expect(words.enumerated().allSatisfy { $1 == "\($0 % 2 == 0) \($0 + 1)" }, "\(words)")
    }

    @Test func estimatesFromTheHeader() throws {
        try Vips.initialise()
        let png = try Fixtures.photo("camera.png")
        let size = try png.withUnsafeBytes { bytes in
            try VipsImageRef.make("pngload") { cvipsshim_pngload_buffer(bytes.baseAddress, bytes.count, $0) }
        }
        #expect(png.withUnsafeBytes { AvatarRenderer.decodeMemory($0, header: size, format: .png, target: 900) } == Int64(size.width * size.height * 4))
        // A WebP: libvips' loader keeps two RGBA copies of the whole picture, and the square.
        let webp = try Fixtures.photo("motorcycle.webp")
        let webpHeader = try webp.withUnsafeBytes { bytes in
            try VipsImageRef.make("webpload") { cvipsshim_webpload_buffer(bytes.baseAddress, bytes.count, 1, $0) }
        }
        let webpSide = Int64(min(webpHeader.width, webpHeader.height))
        #expect(webp.withUnsafeBytes { AvatarRenderer.decodeMemory($0, header: webpHeader, format: .webp, target: 900) }
                == Int64(webpHeader.width * webpHeader.height) * 8 + webpSide * webpSide * 4)
        let jpeg = try Fixtures.photo("astronaut.jpg")
        let header = try jpeg.withUnsafeBytes { bytes in
            try VipsImageRef.make("jpegload") { cvipsshim_jpegload_buffer(bytes.baseAddress, bytes.count, 1, $0) }
        }
        // A baseline JPEG holds only its scaled centre square.
        #expect(jpeg.withUnsafeBytes { AvatarRenderer.decodeMemory($0, header: header, format: .jpeg, target: 330) } < Int64(header.width * header.height * 3))
        // A progressive one holds its coefficients until its last scan, compactly: at 3/8
        // (600 x 400 at 4:4:4 to a 150 px square) 9 values of a block's 64 and a mask of
        // the others, 26 bytes a block instead of 128, plus the decoder's window of five
        // block rows a component and the square.
        let progressive = try [UInt8](Data(contentsOf: Fixtures.repositoryRoot
            .appendingPathComponent("Tests/Fixtures/photos/coffee-444-progressive.jpg")))
        let interlaced = try progressive.withUnsafeBytes { bytes in
            try VipsImageRef.make("jpegload") { cvipsshim_jpegload_buffer(bytes.baseAddress, bytes.count, 1, $0) }
        }
        let blocks = Int64(interlaced.width / 8) * Int64(interlaced.height / 8) * 3
        let window = Int64(interlaced.width / 8) * 5 * 128 * 3
        let square = Int64(151 * 151 * 3)   // the decoded pixels the exact square touches: one more of each at most
        let need = progressive.withUnsafeBytes { AvatarRenderer.decodeMemory($0, header: interlaced, format: .jpeg, target: 150) }
        #expect(need == blocks * 26 + window + square)
        #expect(need < blocks * 128 / 2)   // under half of libjpeg's whole-image arrays
    }
}
