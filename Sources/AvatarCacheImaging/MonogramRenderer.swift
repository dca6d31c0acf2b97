import AvatarCacheMonograms
import AvatarCacheSupport
import CVips
import CVipsShim
import Foundation
import Synchronization

/// The antialiased disc (alpha) for one size: the same for every colour and initials,
/// so it is drawn once per size and process: at twice the size, then each 2 x 2 block
/// averaged, so its edge has exactly 5 levels of alpha (0, 64, 128, 192, 255), which the
/// indexed PNG keeps as they are. (Halved with lanczos, as before, the edge rang: a faint
/// ring of alpha 17 outside the disc and an uneven one inside.)
final class DiscMask: Sendable {
    static let shared = DiscMask()
    // Why @unchecked: a mask is a libvips image (a C handle), made once, then only read by
    // every decode thread.
    private struct Made: @unchecked Sendable { let mask: VipsImageRef }
    private let masks = Mutex<[String: Made]>([:])

    func mask(side: Int, filled: Bool) throws -> VipsImageRef {
        let key = "\(side)-\(filled)"
        if let made = masks.withLock({ $0[key] }) { return made.mask }
        var canvas = try VipsImageRef.make("black") { cvipsshim_black($0, Int32(side * 2), Int32(side * 2), 1) }
        canvas = try canvas.copiedToMemory()
        let ink: [Double] = [255]
        let radius = filled ? side * 2 : side
        let status = ink.withUnsafeBufferPointer { cvipsshim_draw_circle(canvas.pointer, $0.baseAddress, 1, Int32(side), Int32(side), Int32(radius)) }
        guard status == CVIPSSHIM_OK else { throw ImagingError.library("draw_circle: \(Vips.takeErrorMessage())") }
        let halved = try canvas.apply("shrink") { cvipsshim_shrink($0, $1, 2) }
        let mask = try halved.apply("cast") { cvipsshim_cast_uchar($0, $1) }.copiedToMemory()
        masks.withLock { $0[key] = Made(mask: mask) }
        return mask
    }
}

/// Draws monograms with libvips: the initials at 40 % of the diameter, semibold,
/// centred on a circle of the colour, transparent outside (PNG, WebP), or on a full
/// square of the colour when the output is JPEG. Fonts come from fontconfig, so CJK,
/// Hangul, Devanagari, Arabic and emoji need their font packages (scripts/setup).
public struct MonogramRenderer: Sendable {
    public var tiers: [Int]
    public var outputFormat: OutputFormat
    public var quality: Int
    /// Pango font family and weight; the size is computed per tier.
    public var font: String

    public init(tiers: [Int], outputFormat: OutputFormat = .png, quality: Int = 90, font: String = "sans semibold") {
        self.tiers = Array(Set(tiers)).sorted()
        self.outputFormat = outputFormat
        self.quality = quality
        self.font = font
    }

    /// One encoded image per tier, smallest first.
    public func render(_ spec: MonogramSpec) throws -> [RenderedTier] {
        try Vips.initialise()
        return try tiers.map { tier in
            RenderedTier(tier: tier, side: tier, bytes: try render(spec, side: tier))
        }
    }

    private func render(_ spec: MonogramSpec, side: Int) throws -> [UInt8] {
        let background = Self.rgb(spec.background)
        // The colour, with the disc's alpha (or fully opaque for JPEG's square).
        let mask = try DiscMask.shared.mask(side: side, filled: outputFormat == .jpeg)
        let text = try textImage(spec, side: side)
        let x = (side - text.width) / 2, y = (side - text.height) / 2
        // A PNG of two colours: indexed, a quarter of RGBA's bytes.
        if outputFormat == .png {
            let foreground = Self.rgb(spec.foreground)
            var buffer: UnsafeMutableRawPointer?
            var length = 0
            let status = cvipsshim_monogram_png(mask.pointer, text.pointer, Int32(x), Int32(y),
                                                Int32(background.0), Int32(background.1), Int32(background.2),
                                                Int32(foreground.0), Int32(foreground.1), Int32(foreground.2),
                                                Self.pngTextMatchDepth, &buffer, &length)
            if status == CVIPSSHIM_OK, let buffer {
                defer { g_free(buffer) }
                return [UInt8](UnsafeRawBufferPointer(start: buffer, count: length))
            }
            if status == CVIPSSHIM_FAILED { throw ImagingError.library("monogram: \(Vips.takeErrorMessage())") }
        }
        // In one 8-bit pass on this thread; libvips' float compositing for what that
        // does not take.
        var composed: UnsafeMutablePointer<VipsImage>?
        let status = cvipsshim_monogram_compose(mask.pointer, text.pointer, Int32(x), Int32(y),
                                                Int32(background.0), Int32(background.1), Int32(background.2),
                                                outputFormat == .jpeg ? 1 : 0, &composed)
        if status == CVIPSSHIM_OK, let composed {
            return try AvatarRenderer.encode(VipsImageRef(composed), format: outputFormat, quality: quality)
        }
        if status == CVIPSSHIM_FAILED { throw ImagingError.library("monogram: \(Vips.takeErrorMessage())") }
        return try composite(spec, mask: mask, text: text, background: background, side: side)
    }

    /// How many matches deep zlib (at level 9) looks in the text's band of an indexed
    /// monogram; the disc's bands above and below are deflated once per size (MonogramPNG.c,
    /// which has the measurements): 256 costs the CPU the whole picture at zlib's level 6
    /// did, for 9.8 KB a pair instead of 11.7.
    static let pngTextMatchDepth: Int32 = 256

    /// libvips' compositing (float, premultiplied inside): the reference the one-pass
    /// path is tested against, and the path for a text image it does not take.
    func composite(_ spec: MonogramSpec, mask: VipsImageRef, text: VipsImageRef, background: (Double, Double, Double), side: Int) throws -> [UInt8] {
        var colour = [background.0, background.1, background.2]
        guard let flat = colour.withUnsafeMutableBufferPointer({ vips_image_new_from_image(mask.pointer, $0.baseAddress, 3) }) else {
            throw ImagingError.library("new_from_image: \(Vips.takeErrorMessage())")
        }
        let colourImage = VipsImageRef(flat)
        var canvas = try colourImage.apply("bandjoin") { cvipsshim_bandjoin($0, mask.pointer, $1) }
        canvas = try canvas.apply("colourspace") { cvipsshim_colourspace($0, $1, VIPS_INTERPRETATION_sRGB) }

        let x = (side - text.width) / 2, y = (side - text.height) / 2
        var image = try canvas.apply("composite") { base, out in cvipsshim_composite_over(base, text.pointer, out, Int32(x), Int32(y)) }
        image = try image.apply("colourspace") { cvipsshim_colourspace($0, $1, VIPS_INTERPRETATION_sRGB) }
        if !image.isUnsignedChar {
            image = try image.apply("cast") { cvipsshim_cast_uchar($0, $1) }
        }
        if outputFormat == .jpeg {
            image = try image.apply("flatten") { cvipsshim_flatten($0, $1, background.0, background.1, background.2) }
        }
        return try AvatarRenderer.encode(image, format: outputFormat, quality: quality)
    }

    /// The initials at 40 % of the diameter, shrunk if a wide pair would not fit in
    /// 80 % of it.
    func textImage(_ spec: MonogramSpec, side: Int) throws -> VipsImageRef {
        var size = max(1, Int((Double(side) * 0.4).rounded()))
        let markup = "<span foreground=\"\(spec.foreground)\">\(Self.escapeMarkup(spec.text))</span>"
        while true {
            let description = "\(font) \(size)px"
            let text = try VipsImageRef.make("text") { cvipsshim_text($0, markup, description, 72) }
            if text.width <= side * 8 / 10 || size <= 4 { return text }
            size = size * 9 / 10
        }
    }

    static func escapeMarkup(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;")
            .replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }

    static func rgb(_ hex: String) -> (Double, Double, Double) {
        let value = UInt32(hex.dropFirst(), radix: 16) ?? 0
        return (Double(value >> 16 & 0xFF), Double(value >> 8 & 0xFF), Double(value & 0xFF))
    }
}
