import AvatarCacheModel
import AvatarCacheSupport
import CVips
import CVipsShim
import Foundation

/// What a rendered source gives: the source's own size and one image per tier.
public struct RenderedAvatar: Sendable {
    public var format: ImageFormat
    /// Width and height of the source, upright (after EXIF orientation).
    public var sourceWidth: Int
    public var sourceHeight: Int
    public var tiers: [RenderedTier]
    /// Damage the decoder recovered from (a JPEG's stray byte, a short data segment),
    /// as libjpeg words it; the picture is what a browser shows.
    public var warning: String?
    /// The smallest tier's ThumbHash and average colour (`AvatarRenderer.placeholder`).
    public var placeholder: Placeholder?
}

/// One encoded output: square, `side` pixels wide, at most the tier's size.
public struct RenderedTier: Sendable {
    /// The tier asked for, in pixels (for example 330 or 900).
    public var tier: Int
    /// The actual side in pixels: the tier, or less when the source is smaller
    /// (a source is never upscaled).
    public var side: Int
    public var bytes: [UInt8]
}

/// Decodes a source once and derives every tier from that one decode.
///
/// decode flow: sniff format -> read header (pixel limit) -> load at the largest
/// shrink-on-load that still covers the biggest tier -> centre-crop square -> sRGB
/// (embedded ICC profile, CMYK, grey, 16-bit) -> flatten alpha for JPEG -> into memory
/// -> EXIF orientation -> resize per tier, largest first, each from the one before ->
/// encode with metadata stripped -> the placeholder from the smallest tier's pixels.
///
/// Synchronous and CPU-bound: call it on a `DecodeWorkerPool` thread, never on the
/// cooperative pool.
public struct AvatarRenderer: Sendable {
    public var tiers: [Int]
    public var outputFormat: OutputFormat
    public var quality: Int
    public var maxPixels: Int
    public var crop: CropMode
    /// Shared by the decode threads; nil decodes without waiting.
    public var memoryGate: DecodeMemoryGate?
    /// Whether an account photo takes the one-call path (`renderSmallJPEG`); off, it goes
    /// the general way (the tests compare the two).
    package var smallJPEGPath = true

    public init(tiers: [Int], outputFormat: OutputFormat = .jpeg, quality: Int = 82, maxPixels: Int, crop: CropMode = .centre,
                memoryGate: DecodeMemoryGate? = nil) {
        self.crop = crop
        self.memoryGate = memoryGate
        self.tiers = Array(Set(tiers)).sorted(by: >)
        self.outputFormat = outputFormat
        self.quality = quality
        self.maxPixels = maxPixels
    }

    /// `inline`: the bytes came with the export (an address book's photo), not from a
    /// download; only those may be TIFF.
    /// `accountPhotoTried`: `renderAccountPhoto` already declined it.
    public func render(_ data: [UInt8], inline: Bool = false, accountPhotoTried: Bool = false) throws -> RenderedAvatar {
        try Vips.initialise()
        return try data.withUnsafeBytes { bytes in
            guard let format = ImageFormat.sniff(bytes) else {
                throw ImagingError.unsupportedFormat(ImageFormat.unsupportedDescription(bytes))
            }
            if format == .tiff && !inline {
                throw ImagingError.unsupportedFormat("TIFF image (decoded only when an export carries it inline, as old Mac address books do)")
            }
            if format == .bmp && !inline {
                throw ImagingError.unsupportedFormat("BMP image (decoded only when an export carries it inline, as Windows address books do)")
            }
            if !accountPhotoTried, takesAccountPhotos, format == .jpeg, let small = renderSmallJPEG(bytes) { return small }
            return try render(bytes, format: format)
        }
    }

    private var takesAccountPhotos: Bool { smallJPEGPath && crop == .centre && outputFormat == .jpeg }

    /// An account photo rendered on the calling thread, or nil for anything else (which
    /// `render` then renders, told `accountPhotoTried`). Its work is a decode and an encode
    /// of a few kilobytes, a fraction of a millisecond of CPU with nothing to wait for, so
    /// it needs no decode thread; no libvips object is made.
    public func renderAccountPhoto(_ data: [UInt8]) -> RenderedAvatar? {
        guard takesAccountPhotos else { return nil }
        return data.withUnsafeBytes { bytes in
            ImageFormat.sniff(bytes) == .jpeg ? renderSmallJPEG(bytes) : nil
        }
    }

    /// An account photo (a clean JPEG whose centre square is no larger than the smallest
    /// tier, upright, without a profile) in one call on this thread: decoded, encoded once
    /// for every tier, its placeholder made, with the thread's own libjpeg objects and
    /// buffers (cvipsshim_small.h). The same bytes as the general path; nil for anything
    /// else, which the general path renders (and fails with its reasons).
    private func renderSmallJPEG(_ bytes: UnsafeRawBufferPointer) -> RenderedAvatar? {
        guard let smallest = tiers.last else { return nil }
        var result = cvipsshim_small_jpeg()
        let side = Int(CVIPSSHIM_SMALL_PLACEHOLDER_SIDE)
        var rgba = [UInt8](repeating: 0, count: side * side * 4)
        guard cvipsshim_small_jpeg_render(bytes.baseAddress, bytes.count, Int32(smallest), Int64(maxPixels), Int32(quality),
                                          &result, &rgba) == CVIPSSHIM_OK, let jpeg = result.jpeg else { return nil }
        let encoded = Array(UnsafeBufferPointer(start: jpeg, count: result.jpeg_length))
        let square = Int(result.side), placeholderSide = Int(result.placeholder_side)
        if placeholderSide < side { rgba.removeSubrange((placeholderSide * placeholderSide * 4)...) }
        return RenderedAvatar(format: .jpeg, sourceWidth: Int(result.width), sourceHeight: Int(result.height),
                              tiers: tiers.reversed().map { RenderedTier(tier: $0, side: square, bytes: encoded) },
                              warning: nil,
                              placeholder: Self.placeholder(rgba: rgba, side: placeholderSide,
                                                            average: (result.average.0, result.average.1, result.average.2)))
    }

    private func render(_ bytes: UnsafeRawBufferPointer, format: ImageFormat) throws -> RenderedAvatar {
        // A JPEG that ends with its end-of-image marker is decoded past the warnings libjpeg
        // recovers from (the centre decoder says which; jpegload does not); one cut short
        // fails, so nothing half-grey is cached.
        let tolerant = format == .jpeg && JPEGStructure.hasEndOfImage(bytes)
        // The header alone: libvips loaders are lazy, so no pixel is decoded yet.
        let header = try load(bytes, format: format, shrink: 1, tolerant: tolerant)
        let width = header.width, height = header.height
        guard width > 0, height > 0 else { throw ImagingError.invalidImage("image has no pixels") }
        guard width.multipliedReportingOverflow(by: height).partialValue <= maxPixels,
              !width.multipliedReportingOverflow(by: height).overflow else {
            throw ImagingError.tooManyPixels(width: width, height: height, limit: maxPixels)
        }
        guard let memoryGate else { return try decode(bytes, format: format, header: header, tolerant: tolerant) }
        let need = Self.decodeMemory(bytes, header: header, format: format, target: tiers.first ?? 0,
                                     halfSquare: crop == .centre && !header.hasAlpha && min(width, height) / 2 >= (tiers.first ?? 0))
        // On a pool thread, a decode that does not fit now is deferred (the gate throws
        // `Deferred`) and the pool runs it again when it fits.
        return try memoryGate.withReservationOrDeferral(need) {
            try decode(bytes, format: format, header: header, tolerant: tolerant)
        }
    }

    /// What a decode holds at its peak, roughly: a progressive JPEG keeps its
    /// coefficients until its last scan (compactly: `cvipsshim_jpeg_decode_memory`);
    /// other decodes hold the pixels they make (a JPEG at its DCT scale, a HEIC its
    /// planes, a WebP two full RGBA pictures and its square, other formats at full size
    /// with alpha).
    static func decodeMemory(_ bytes: UnsafeRawBufferPointer, header: VipsImageRef, format: ImageFormat, target: Int,
                             halfSquare: Bool = false) -> Int64 {
        if format == .jpeg {
            let exact = cvipsshim_jpeg_decode_memory(bytes.baseAddress, bytes.count, Int32(target))
            if exact >= 0 { return Int64(exact) }
        }
        // libheif holds the decoded YCbCr planes and its tiles' decoder buffers, and, for
        // the whole image, the RGB it converts them to; only the centre square at half
        // size (`halfSquare`) holds less. 8 and 6 bytes a pixel are measured figures
        // (docs/performance-notes.md, "Decode-memory estimates").
        if format == .heif { return Int64(header.width) * Int64(header.height) * (halfSquare ? 6 : 8) }
        // libvips' WebP loader holds the whole picture as RGBA twice (its frame and its
        // output), and the square is copied once more.
        if format == .webp {
            let side = Int64(min(header.width, header.height))
            return Int64(header.width) * Int64(header.height) * 4 * 2 + side * side * 4
        }
        return Int64(header.width) * Int64(header.height) * 4
    }

    /// The HEVC decoder's threads for one HEIC (libheif's own decoder starts one): they let
    /// a large HEIC's wavefronts decode on every core, which a 12 MP HEIC needs when the
    /// decode budget keeps the other decode thread from starting a second one. More
    /// threads than cores fill the gaps where a wavefront waits on the row above
    /// (docs/performance-notes.md, "HEVC threads").
    static let hevcThreads: Int32 = 4

    /// The HEVC decoder behind HEIC: FFmpeg's (libavcodec) where the system has it, else
    /// libde265 (HEVCDecoder.c). Both give the same pixels; libavcodec is the faster
    /// (docs/performance-notes.md, "HEIC through FFmpeg's HEVC decoder").
    static let hevcDecoder = CVIPSSHIM_HEVC_LIBAVCODEC

    private func decode(_ bytes: UnsafeRawBufferPointer, format: ImageFormat, header: VipsImageRef, tolerant: Bool) throws -> RenderedAvatar {
        // One variable for the picture as it goes: each step's input is released as the
        // next is made (a HEIC's whole decode is not held while the tiers are made).
        var image: VipsImageRef
        let source: Source
        (image, source) = try decodeSource(bytes, format: format, header: header, tolerant: tolerant)
        image = try square(image)
        var colourLater = try makeUpright(&image, orientation: source.orientation)
        var outputs: [RenderedTier] = []
        for (index, tier) in tiers.enumerated() {
            // A tier the picture is no larger than is the tier before it: encoded once.
            var changed = outputs.isEmpty
            if image.width > tier {
                changed = true
                image = try Self.resizeKeepingAlpha(image, to: tier)
                if colourLater {
                    image = try toSRGB(image)
                    colourLater = false
                }
                // Into memory before encoding when a smaller tier is resized from this
                // one: a lazy image would be resampled again for it.
                if index + 1 < tiers.count && !image.isInMemory { image = try image.copiedToMemory() }
            }
            // The smallest tier into memory too: its pixels make the placeholder.
            if index + 1 == tiers.count && !image.isInMemory { image = try image.copiedToMemory() }
            outputs.append(RenderedTier(tier: tier, side: image.width, bytes: changed ? try encode(image) : outputs[outputs.count - 1].bytes))
        }
        let (width, height) = source.orientation >= 5 ? (source.height, source.width) : (source.width, source.height)
        return RenderedAvatar(format: format, sourceWidth: width, sourceHeight: height, tiers: outputs.reversed(),
                              warning: source.warning, placeholder: Self.placeholder(image))
    }

    /// What is known of a source picture once decoded: its size and orientation as its
    /// header says (a HEIC decoded upright: 1), and libjpeg's warning for a JPEG decoded
    /// past damage.
    private struct Source {
        var width: Int
        var height: Int
        var orientation: Int
        var warning: String?
    }

    /// Decodes by the quickest path the format and crop allow: a JPEG's centre square
    /// alone, a HEIC's (at half size when that is enough), else libvips' loader with its
    /// shrink-on-load.
    private func decodeSource(_ bytes: UnsafeRawBufferPointer, format: ImageFormat, header: VipsImageRef,
                              tolerant: Bool) throws -> (VipsImageRef, Source) {
        let largestTier = tiers.first ?? 0
        var source = Source(width: header.width, height: header.height, orientation: header.orientation)
        if format == .jpeg, crop == .centre,
           let square = try decodeJPEGCentre(bytes, target: largestTier, header: header, tolerant: tolerant, warning: &source.warning) {
            return (square, source)
        }
        if format == .heif, let decoded = try decodeHEIF(bytes, halfSquareFrom: crop == .centre ? largestTier : 0) {
            (source.width, source.height, source.orientation) = (decoded.width, decoded.height, 1)
            return (decoded.image, source)
        }
        let shrink = Self.shrinkOnLoad(shortSide: min(header.width, header.height), target: largestTier, format: format)
        return (shrink == 1 ? header : try load(bytes, format: format, shrink: shrink, tolerant: tolerant), source)
    }

    /// The square cut from the middle, or by libvips' attention crop. Cropped before
    /// anything else: the centre square is the same whatever the orientation, and every
    /// later step then works on fewer pixels.
    private func square(_ image: VipsImageRef) throws -> VipsImageRef {
        guard image.width != image.height else { return image }
        let side = min(image.width, image.height)
        if crop == .attention {
            // The attention crop reads the image more than once: decode it first.
            let decoded: VipsImageRef
            do { decoded = try image.copiedToMemory() } catch ImagingError.library(let message) { throw ImagingError.invalidImage(message) }
            return try decoded.apply("smartcrop") { cvipsshim_smartcrop_attention($0, $1, Int32(side), Int32(side)) }
        }
        let left = (image.width - side) / 2, top = (image.height - side) / 2
        return try image.apply("crop") { cvipsshim_extract_area($0, $1, Int32(left), Int32(top), Int32(side), Int32(side)) }
    }

    /// Makes the square sRGB (or leaves its profile to apply after the first resize:
    /// returns true), puts it on white when a JPEG is written, decodes it into memory and
    /// turns it upright.
    private func makeUpright(_ image: inout VipsImageRef, orientation: Int) throws -> Bool {
        // An embedded profile is applied after the first resize when that comes first
        // (8-bit, no alpha): the largest tier has fewer pixels than the decoded square
        // (a third fewer for a phone photo), and lcms' CMYK transform costs per pixel.
        // Resampling the device values first is as good as resampling sRGB's gamma-
        // encoded ones, which is what every tier's resize does anyway.
        let colourLater = image.hasICCProfile && !image.hasAlpha && image.isUnsignedChar
            && (image.bands == 3 || image.bands == 4) && image.width > (tiers.first ?? 0)
        if !colourLater { image = try toSRGB(image) }
        if image.hasAlpha && outputFormat == .jpeg {
            // A transparent source goes on white, never on black.
            image = try image.apply("flatten") { cvipsshim_flatten($0, $1, 255, 255, 255) }
        }
        if !image.isInMemory {
            do {
                image = try image.copiedToMemory()
            } catch ImagingError.library(let message) {
                throw ImagingError.invalidImage(message)
            }
        }
        if orientation > 1 {
            vips_image_set_int(image.pointer, "orientation", Int32(orientation))
            image = try image.apply("autorot") { cvipsshim_autorot($0, $1) }
        }
        return colourLater
    }

    /// The side of the picture a ThumbHash is made from: more pixels change the hash
    /// little (its luminance has at most 7 × 7 terms) and cost per photo.
    static let placeholderSide = 32

    /// A ThumbHash of an in-memory 8-bit picture box-averaged to at most 32 × 32, and the
    /// average colour of the whole picture on white (as a JPEG tier shows it); nil for a
    /// picture the shim does not take (not 8-bit, 1 to 4 bands).
    static func placeholder(_ image: VipsImageRef) -> Placeholder? {
        let side = min(placeholderSide, image.width, image.height)
        guard side > 0 else { return nil }
        var rgba = [UInt8](repeating: 0, count: side * side * 4)
        var average: (Double, Double, Double) = (0, 0, 0)
        let status = withUnsafeMutablePointer(to: &average) {
            $0.withMemoryRebound(to: Double.self, capacity: 3) { cvipsshim_placeholder_pixels(image.pointer, Int32(side), &rgba, $0) }
        }
        guard status == CVIPSSHIM_OK else { return nil }
        return placeholder(rgba: rgba, side: side, average: average)
    }

    /// A placeholder from a picture box-averaged to `side` × `side` straight RGBA and the
    /// whole picture's mean colour on white.
    static func placeholder(rgba: [UInt8], side: Int, average: (Double, Double, Double)) -> Placeholder? {
        guard let hash = ThumbHashEncoder.encode(width: side, height: side, rgba: rgba) else { return nil }
        func byte(_ value: Double) -> Int { min(255, max(0, Int(value.rounded()))) }
        // "#RRGGBB", upper-case hex (as String(format: "#%02X%02X%02X") writes it, without
        // Foundation's formatter, a few microseconds a photo).
        let digits = Array("0123456789ABCDEF".utf8)
        var hex: [UInt8] = [UInt8(ascii: "#")]
        for value in [byte(average.0), byte(average.1), byte(average.2)] {
            hex.append(digits[value >> 4])
            hex.append(digits[value & 15])
        }
        let color = String(decoding: hex, as: UTF8.self)
        return Placeholder(thumbHash: Data(hash).base64EncodedString(), color: color)
    }

    /// A HEIC decoded by libheif straight into memory on this thread, its rotation and
    /// mirroring applied (cheaper than heifload: docs/performance-notes.md, "What was
    /// done"), with its upright size. With the centre crop (`halfSquareFrom` the largest
    /// tier), a large one's centre square comes at half size straight from its YCbCr
    /// planes (no full-size RGB image) when that is still at least the largest tier. nil
    /// when the shim was built without this path (heifload then).
    private func decodeHEIF(_ bytes: UnsafeRawBufferPointer, halfSquareFrom: Int) throws -> (image: VipsImageRef, width: Int, height: Int)? {
        var codedWidth: Int32 = 0, codedHeight: Int32 = 0, shownWidth: Int32 = 0, shownHeight: Int32 = 0
        var status = CVIPSSHIM_OK
        var square: [Double] = [0, 0, 0]
        do {
            var image = try VipsImageRef.make("heif") { out in
                status = cvipsshim_heif_decode_square(bytes.baseAddress, bytes.count, Int64(maxPixels), Int32(halfSquareFrom),
                                                      Self.hevcDecoder, Self.hevcThreads, out, &codedWidth, &codedHeight, &shownWidth, &shownHeight,
                                                      &square)
                return status
            }
            // The half square's blocks start on even pixels.
            if square[2] > 0 { image = try Self.exactSquare(of: image, at: square, to: halfSquareFrom) }
            return (image, Int(shownWidth), Int(shownHeight))
        } catch ImagingError.library where status == CVIPSSHIM_NOT_APPLICABLE {
            return nil
        } catch ImagingError.library where status == CVIPSSHIM_TOO_LARGE {
            throw ImagingError.tooManyPixels(width: Int(codedWidth), height: Int(codedHeight), limit: maxPixels)
        } catch ImagingError.library(let message) {
            throw ImagingError.invalidImage(message)
        }
    }

    /// The width of an encoded square image, read from its header (for files already in
    /// the cache).
    package static func headerSide(_ data: [UInt8]) throws -> Int {
        try Vips.initialise()
        return try data.withUnsafeBytes { bytes in
            guard let format = ImageFormat.sniff(bytes) else { throw ImagingError.unsupportedFormat("cache file") }
            let base = bytes.baseAddress, count = bytes.count
            let image: VipsImageRef
            switch format {
            case .jpeg: image = try VipsImageRef.make("jpegload") { cvipsshim_jpegload_buffer(base, count, 1, $0) }
            case .png: image = try VipsImageRef.make("pngload") { cvipsshim_pngload_buffer(base, count, $0) }
            case .webp: image = try VipsImageRef.make("webpload") { cvipsshim_webpload_buffer(base, count, 1, $0) }
            default: throw ImagingError.unsupportedFormat("cache file")
            }
            guard image.width == image.height else { throw ImagingError.invalidImage("not square") }
            return image.width
        }
    }

    /// The centre square of an RGB or greyscale JPEG, decoded at the smallest DCT scale
    /// that covers `target` (libjpeg-turbo N/8), with the header's ICC profile attached
    /// for the colour conversion (CMYK and YCCK come out as CMYK). nil when the JPEG has
    /// an unusual component count, which goes through jpegload.
    private func decodeJPEGCentre(_ bytes: UnsafeRawBufferPointer, target: Int, header: VipsImageRef, tolerant: Bool,
                                  warning: inout String?) throws -> VipsImageRef? {
        var out: UnsafeMutablePointer<VipsImage>?
        var message = [CChar](repeating: 0, count: 200)
        var square: [Double] = [0, 0, 0]
        let status = tolerant
            ? cvipsshim_jpeg_decode_centre_tolerant(bytes.baseAddress, bytes.count, Int32(target), &message, message.count, &square, &out)
            : cvipsshim_jpeg_decode_centre(bytes.baseAddress, bytes.count, Int32(target), 1, &square, &out)
        if status == CVIPSSHIM_OK, message[0] != 0 { warning = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        if status == CVIPSSHIM_NOT_APPLICABLE { return nil }
        guard status == CVIPSSHIM_OK, let out else { throw ImagingError.invalidImage(Vips.takeErrorMessage()) }
        let image = try Self.exactSquare(of: VipsImageRef(out), at: square, to: target)
        var data: UnsafeRawPointer?
        var length = 0
        if header.hasICCProfile, vips_image_get_blob(header.pointer, "icc-profile-data", &data, &length) == 0, let data {
            vips_image_set_blob_copy(image.pointer, "icc-profile-data", data, length)
        }
        if header.orientation > 1 { vips_image_set_int(image.pointer, "orientation", Int32(header.orientation)) }
        return image
    }

    /// A fast decode at a reduced scale (JPEG N/8, HEIC's half size) gives the pixels the
    /// exact centre square touches and where it lies in them (`square`: x, y, side, in
    /// those pixels). When it lies between pixels, the largest tier is resampled from
    /// exactly that square, so its centre is the whole picture's (a crop to whole pixels
    /// would move it by up to half a pixel); when it is the image itself, the image.
    static func exactSquare(of image: VipsImageRef, at square: [Double], to target: Int) throws -> VipsImageRef {
        let (x, y, side) = (square[0], square[1], square[2])
        guard x != 0 || y != 0 || side != Double(image.width) || side != Double(image.height) else { return image }
        do {
            return try transposing(image) { rows, vertical in
                try rows.apply("reducev_exact") { cvipsshim_reducev_exact($0, $1, vertical ? y : x, side, Int32(target)) }
            }
        } catch ImagingError.library(let message) {
            throw ImagingError.invalidImage(message)
        }
    }

    /// `resample` on the rows (`vertical` true), then, with a quarter turn before and after,
    /// on the columns: libvips' vertical reducers are vectorised, its horizontal one is not.
    static func transposing(_ image: VipsImageRef, _ resample: (VipsImageRef, _ vertical: Bool) throws -> VipsImageRef) throws -> VipsImageRef {
        var current = try resample(image, true)
        current = try current.apply("rot") { cvipsshim_rot($0, $1, VIPS_ANGLE_D90) }.copiedToMemory()
        current = try resample(current, false)
        return try current.apply("rot") { cvipsshim_rot($0, $1, VIPS_ANGLE_D270) }
    }

    /// The largest power-of-two shrink (JPEG DCT scaling, WebP scaled decode) whose
    /// result still covers `target` on the short side, so no tier is ever upscaled.
    static func shrinkOnLoad(shortSide: Int, target: Int, format: ImageFormat) -> Int {
        guard format == .jpeg || format == .webp, target > 0 else { return 1 }
        for factor in [8, 4, 2] where shortSide / factor >= target {
            return factor
        }
        return 1
    }

    private func load(_ bytes: UnsafeRawBufferPointer, format: ImageFormat, shrink: Int, tolerant: Bool = false) throws -> VipsImageRef {
        let base = bytes.baseAddress, count = bytes.count
        do {
            switch format {
            case .jpeg where tolerant:
                return try VipsImageRef.make("jpegload") { cvipsshim_jpegload_buffer_tolerant(base, count, Int32(shrink), $0) }
            case .jpeg:
                return try VipsImageRef.make("jpegload") { cvipsshim_jpegload_buffer(base, count, Int32(shrink), $0) }
            case .png:
                return try VipsImageRef.make("pngload") { cvipsshim_pngload_buffer(base, count, $0) }
            case .webp:
                return try VipsImageRef.make("webpload") { cvipsshim_webpload_buffer(base, count, 1.0 / Double(shrink), $0) }
            case .gif:
                return try VipsImageRef.make("gifload") { cvipsshim_gifload_buffer(base, count, $0) }
            case .heif:
                return try VipsImageRef.make("heifload") { cvipsshim_heifload_buffer(base, count, $0) }
            case .tiff:
                return try VipsImageRef.make("tiffload") { cvipsshim_tiffload_buffer(base, count, $0) }
            case .bmp:
                // Decoded here (libvips would hand it to ImageMagick), its header checked first.
                let bitmap = try BMPDecoder.decode(bytes, maxPixels: maxPixels)
                let made = bitmap.pixels.withUnsafeBytes { pixels in
                    vips_image_new_from_memory_copy(pixels.baseAddress, pixels.count, Int32(bitmap.width), Int32(bitmap.height),
                                                    Int32(bitmap.bands), VIPS_FORMAT_UCHAR)
                }
                guard let made else { throw ImagingError.library("BMP: \(Vips.takeErrorMessage())") }
                return VipsImageRef(made)
            }
        } catch ImagingError.library(let message) {
            throw ImagingError.invalidImage(message)
        }
    }

    /// Converts to 8-bit sRGB: through the embedded ICC profile when there is one
    /// (this is what makes CMYK JPEGs come out in the right colours), else by
    /// libvips' own colour-space conversion. 8-bit pixels go through one cached lcms
    /// transform on this thread; the rest (16-bit, odd band counts, profiles lcms will
    /// not pair with the pixels) through libvips' icc_transform.
    private func toSRGB(_ image: VipsImageRef) throws -> VipsImageRef {
        var image = image
        if image.hasICCProfile {
            var out: UnsafeMutablePointer<VipsImage>?
            let status = cvipsshim_icc_to_srgb8(image.pointer, &out)
            if status == CVIPSSHIM_OK, let out { return VipsImageRef(out) }
            if status == CVIPSSHIM_FAILED { throw ImagingError.invalidImage(Vips.takeErrorMessage()) }
        }
        if image.hasICCProfile,
           let transformed = try? image.apply("icc_transform", { cvipsshim_icc_transform_srgb($0, $1) }) {
            image = transformed
        } else if image.interpretation != VIPS_INTERPRETATION_sRGB || !image.isUnsignedChar {
            image = try image.apply("colourspace") { cvipsshim_colourspace($0, $1, VIPS_INTERPRETATION_sRGB) }
        }
        if !image.isUnsignedChar {
            image = try image.apply("cast") { cvipsshim_cast_uchar($0, $1) }
        }
        return image
    }

    /// Resizes a square image to `side` pixels. With alpha the pixels are premultiplied
    /// first, or transparent pixels' colours bleed into the edges.
    static func resizeKeepingAlpha(_ image: VipsImageRef, to side: Int) throws -> VipsImageRef {
        guard image.hasAlpha else {
            return try resizeByTransposing(image, to: side)
        }
        let scale = Double(side) / Double(image.width)
        let premultiplied = try image.apply("premultiply") { cvipsshim_premultiply($0, $1) }
        let resized = try premultiplied.apply("resize") { cvipsshim_resize($0, $1, scale) }
        let straight = try resized.apply("unpremultiply") { cvipsshim_unpremultiply($0, $1) }
        return try straight.apply("cast") { cvipsshim_cast_uchar($0, $1) }
    }

    /// Lanczos-3 both ways with libvips' vertical reducer: vertically, turned a quarter,
    /// vertically again, turned back. reducev is vectorised (orc); reduceh in libvips
    /// 8.14 is scalar C (docs/performance-notes.md, "What was done", has the saving).
    /// Each step is rendered on this thread into memory (a few MB).
    static func resizeByTransposing(_ image: VipsImageRef, to side: Int) throws -> VipsImageRef {
        let shrink = Double(image.width) / Double(side)
        return try transposing(image) { rows, _ in
            try rows.apply("reducev") { cvipsshim_reducev_lanczos3($0, $1, shrink) }.copiedToMemory()
        }
    }

    private func encode(_ image: VipsImageRef) throws -> [UInt8] {
        try Self.encode(image, format: outputFormat, quality: quality)
    }

    static func encode(_ image: VipsImageRef, format: OutputFormat, quality: Int) throws -> [UInt8] {
        let quality = Int32(quality)
        switch format {
        case .jpeg:
            // libjpeg-turbo on this thread for 8-bit RGB and grey (every tier: they are
            // flattened sRGB); jpegsave, through libvips' thread pool, for anything else.
            if image.isUnsignedChar, image.bands == 1 || image.bands == 3,
               let bytes = try image.encodeIfTaken("jpeg", { cvipsshim_jpeg_encode($0, quality, $1, $2) }) {
                return bytes
            }
            return try image.encode("jpegsave") { cvipsshim_jpegsave_buffer($0, $1, $2, quality) }
        case .png: return try image.encode("pngsave") { cvipsshim_pngsave_buffer($0, $1, $2) }
        case .webp: return try image.encode("webpsave") { cvipsshim_webpsave_buffer($0, $1, $2, quality) }
        }
    }
}

extension VipsImageRef {
    /// The EXIF orientation tag (1…8), or 1 when there is none.
    var orientation: Int {
        var value: Int32 = 1
        guard vips_image_get_typeof(pointer, "orientation") != 0,
              vips_image_get_int(pointer, "orientation", &value) == 0 else { return 1 }
        return (1...8).contains(Int(value)) ? Int(value) : 1
    }
}
