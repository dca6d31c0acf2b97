import Foundation
import Testing
@testable import AvatarCacheImaging
import AvatarCacheImagingTestSupport
import AvatarCacheTestKit
import CVips
import CVipsShim

/// The JPEG fast path decodes at a reduced DCT scale, where the picture's centre square
/// falls between decoded pixels: its tier must still be that square, centred as a full
/// decode and crop centres it (within a tenth of an output pixel), and look like it.
@Suite struct ExactCentringTests {
    /// A JPEG of `width` × `height` whose pixels `value(x, y)` gives (grey, as RGB).
    static func jpeg(width: Int, height: Int, quality: Int = 95, _ value: (Int, Int) -> UInt8) throws -> [UInt8] {
        try Vips.initialise()
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let v = value(x, y), at = (y * width + x) * 3
                pixels[at] = v; pixels[at + 1] = v; pixels[at + 2] = v
            }
        }
        let image = try pixels.withUnsafeBytes { raw -> VipsImageRef in
            guard let made = vips_image_new_from_memory_copy(raw.baseAddress, raw.count, Int32(width), Int32(height), 3, VIPS_FORMAT_UCHAR) else {
                throw ImagingError.library(Vips.takeErrorMessage())
            }
            return VipsImageRef(made)
        }
        return try AvatarRenderer.encode(image, format: .jpeg, quality: quality)
    }

    /// The brightness-weighted centre of a picture above `floor`, in pixel indices.
    static func centroid(_ pixels: Pixels, above floor: Double) -> (x: Double, y: Double) {
        var total = 0.0, sx = 0.0, sy = 0.0
        for y in 0..<pixels.height {
            for x in 0..<pixels.width {
                let weight = max(0, Double(pixels.pixel(x, y)[0]) - floor)
                total += weight; sx += weight * Double(x); sy += weight * Double(y)
            }
        }
        return (sx / total, sy / total)
    }

    @Test(arguments: [(3001, 2003), (2411, 1803), (1999, 1517), (1203, 1601), (2600, 1950), (4000, 3000)])
    func theTierIsTheExactSquareCentred(size: (Int, Int)) throws {
        let (width, height) = size
        let side = min(width, height), left = (width - side) / 2, top = (height - side) / 2
        // A smooth blob at the centre of the square a full decode would crop.
        let cx = Double(left) + Double(side - 1) / 2, cy = Double(top) + Double(side - 1) / 2, sigma = Double(side) / 10
        let bytes = try Self.jpeg(width: width, height: height) { x, y in
            let d = (Double(x) - cx) * (Double(x) - cx) + (Double(y) - cy) * (Double(y) - cy)
            return UInt8(30 + 200 * exp(-d / (2 * sigma * sigma)))
        }
        let tier = 900
        let rendered = try AvatarRenderer(tiers: [tier], maxPixels: 50_000_000).render(bytes)
        let ours = try Pixels(decoding: rendered.tiers[0].bytes)
        #expect(ours.width == tier && ours.height == tier)
        let reference = try Pixels.rawCentre(ofJPEG: bytes, side: tier)
        let (x, y) = Self.centroid(ours, above: 40), (rx, ry) = Self.centroid(reference, above: 40)
        let middle = Double(tier - 1) / 2
        #expect(abs(rx - middle) < 0.05 && abs(ry - middle) < 0.05, "the reference's own centre: \(rx), \(ry)")
        #expect(abs(x - middle) < 0.1 && abs(y - middle) < 0.1, "\(width) x \(height): centre at \(x), \(y), not \(middle)")
    }

    /// HEICs whose half-size square starts or ends between 2 × 2 blocks (made by
    /// scripts/make-centring-fixtures: a blob centred on the exact square).
    @Test(arguments: ["blob-2411x1803.heic", "blob-2603x1901.heic", "blob-1901x2603.heic"])
    func aHEICsHalfSizeTierIsTheExactSquareCentred(name: String) throws {
        let bytes = try [UInt8](Data(contentsOf: Fixtures.repositoryRoot.appendingPathComponent("Tests/Fixtures/photos/\(name)")))
        let tier = 900
        let rendered = try AvatarRenderer(tiers: [tier], maxPixels: 50_000_000).render(bytes)
        let ours = try Pixels(decoding: rendered.tiers[0].bytes)
        #expect(ours.width == tier && ours.height == tier)
        let (x, y) = Self.centroid(ours, above: 40), middle = Double(tier - 1) / 2
        #expect(abs(x - middle) < 0.1 && abs(y - middle) < 0.1, "\(name): centre at \(x), \(y), not \(middle)")
    }

    /// The resample makes new pixels; the picture's profile goes with them (a HEIC's half
    /// square carries its ICC profile, and a profile lost is colours converted as sRGB).
    @Test func theExactSquareKeepsTheProfile() throws {
        try Vips.initialise()
        let profile: [UInt8] = Array("a profile's bytes".utf8)
        let pixels = [UInt8](repeating: 128, count: 301 * 300 * 3)
        let image = try pixels.withUnsafeBytes { raw -> VipsImageRef in
            guard let made = vips_image_new_from_memory_copy(raw.baseAddress, raw.count, 301, 300, 3, VIPS_FORMAT_UCHAR) else {
                throw ImagingError.library(Vips.takeErrorMessage())
            }
            return VipsImageRef(made)
        }
        profile.withUnsafeBytes { _ = vips_image_set_blob_copy(image.pointer, "icc-profile-data", $0.baseAddress, $0.count) }
        let square = try AvatarRenderer.exactSquare(of: image, at: [0.5, 0, 300], to: 150)
        #expect(square.width == 150 && square.height == 150 && square.hasICCProfile)
        var data: UnsafeRawPointer?
        var length = 0
        #expect(vips_image_get_blob(square.pointer, "icc-profile-data", &data, &length) == 0)
        #expect(data.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) } == profile)
        // The image that already is the exact square comes back as it is.
        let whole = try AvatarRenderer.exactSquare(of: square, at: [0, 0, 150], to: 150)
        #expect(whole.pointer == square.pointer)
    }

    @Test func aPhotosTierLooksLikeTheFullDecodeCroppedExactly() throws {
        // A detailed photo at a size whose square starts between decoded pixels at 4/8.
        try Vips.initialise()
        let source = try [UInt8](Data(contentsOf: Fixtures.repositoryRoot.appendingPathComponent("samples/photos/coffee.jpg")))
        let large = try source.withUnsafeBytes { raw -> [UInt8] in
            let image = try VipsImageRef.make("load") { cvipsshim_jpegload_buffer(raw.baseAddress, raw.count, 1, $0) }
            let resized = try image.apply("resize") { cvipsshim_resize($0, $1, 3001.0 / 600) }.copiedToMemory()
            return try AvatarRenderer.encode(try resized.apply("cast") { cvipsshim_cast_uchar($0, $1) }, format: .jpeg, quality: 95)
        }
        let tier = 900
        let rendered = try AvatarRenderer(tiers: [tier], quality: 95, maxPixels: 50_000_000).render(large)
        let ours = try Pixels(decoding: rendered.tiers[0].bytes)
        let reference = try Pixels.rawCentre(ofJPEG: large, side: tier)
        let similarity = Self.ssim(ours, reference)
        #expect(similarity > 0.993, "SSIM \(similarity)")   // 0.988 with the square cut to whole decoded pixels
    }

    /// Mean SSIM of the luma of two pictures of one size, over 8 × 8 windows every 4 pixels.
    static func ssim(_ a: Pixels, _ b: Pixels) -> Double {
        func luma(_ p: Pixels) -> [Double] {
            (0..<(p.width * p.height)).map { (i: Int) -> Double in
                let s = i * p.bands
                guard p.bands >= 3 else { return Double(p.data[s]) }
                let r: Double = 0.299 * Double(p.data[s]), g: Double = 0.587 * Double(p.data[s + 1]), b: Double = 0.114 * Double(p.data[s + 2])
                return r + g + b
            }
        }
        let la = luma(a), lb = luma(b), w = a.width
        let c1: Double = 6.5025, c2: Double = 58.5225   // (0.01 × 255)², (0.03 × 255)²
        var total = 0.0, windows = 0
        for y in stride(from: 0, through: a.height - 8, by: 4) {
            for x in stride(from: 0, through: w - 8, by: 4) {
                var ma = 0.0, mb = 0.0
                for j in 0..<8 { for i in 0..<8 { ma += la[(y + j) * w + x + i]; mb += lb[(y + j) * w + x + i] } }
                ma /= 64; mb /= 64
                var va = 0.0, vb = 0.0, cov = 0.0
                for j in 0..<8 {
                    for i in 0..<8 {
                        let da = la[(y + j) * w + x + i] - ma, db = lb[(y + j) * w + x + i] - mb
                        va += da * da; vb += db * db; cov += da * db
                    }
                }
                va /= 63; vb /= 63; cov /= 63
                total += ((2 * ma * mb + c1) * (2 * cov + c2)) / ((ma * ma + mb * mb + c1) * (va + vb + c2))
                windows += 1
            }
        }
        return total / Double(windows)
    }
}
