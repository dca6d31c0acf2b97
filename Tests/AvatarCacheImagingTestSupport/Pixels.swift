import CVips
import CVipsShim
import Foundation
import AvatarCacheImaging
import AvatarCacheSupport

/// Decoded 8-bit pixels of an encoded image, for comparing outputs in tests.
package struct Pixels {
    package var width: Int
    package var height: Int
    package var bands: Int
    package var data: [UInt8]

    package init(width: Int, height: Int, bands: Int, data: [UInt8]) {
        self.width = width
        self.height = height
        self.bands = bands
        self.data = data
    }

    package init(decoding bytes: [UInt8]) throws {
        try Vips.initialise()
        let image: VipsImageRef = try bytes.withUnsafeBytes { raw in
            let format = ImageFormat.sniff(raw)
            return try VipsImageRef.make("load") {
                switch format {
                case .png?: return cvipsshim_pngload_buffer(raw.baseAddress, raw.count, $0)
                case .webp?: return cvipsshim_webpload_buffer(raw.baseAddress, raw.count, 1, $0)
                case .gif?: return cvipsshim_gifload_buffer(raw.baseAddress, raw.count, $0)
                default: return cvipsshim_jpegload_buffer(raw.baseAddress, raw.count, 1, $0)
                }
            }.copiedToMemory()
        }
        try self.init(image)
    }

    /// The pixels of an image already made.
    package init(_ image: VipsImageRef) throws {
        width = image.width
        height = image.height
        bands = image.bands
        var size = 0
        guard let memory = vips_image_write_to_memory(image.pointer, &size) else {
            throw ImagingError.library(Vips.takeErrorMessage())
        }
        data = Array(UnsafeRawBufferPointer(start: memory, count: size))
        g_free(memory)
    }

    package func pixel(_ x: Int, _ y: Int) -> [UInt8] {
        let start = (y * width + x) * bands
        return Array(data[start..<start + bands])
    }

    /// Mean absolute difference per sample against another image of the same size (or,
    /// with `width`, over the first `width` columns of both).
    package func meanDifference(_ other: Pixels, width columns: Int? = nil, transform: (Int, Int) -> (Int, Int) = { ($0, $1) }) -> Double {
        let width = columns ?? self.width
        precondition((columns != nil || self.width == other.width) && height == other.height && bands == other.bands)
        var total = 0
        for y in 0..<height {
            for x in 0..<width {
                let (ox, oy) = transform(x, y)
                let a = pixel(x, y), b = other.pixel(ox, oy)
                for band in 0..<bands { total += abs(Int(a[band]) - Int(b[band])) }
            }
        }
        return Double(total) / Double(width * height * bands)
    }
}

extension Pixels {
    /// The centre square of a JPEG's decoded bands as stored (CMYK stays CMYK), resized
    /// to `side`: for inspecting inputs.
    package static func rawCentre(ofJPEG bytes: [UInt8], side target: Int) throws -> Pixels {
        try Vips.initialise()
        return try bytes.withUnsafeBytes { raw in
            var image = try VipsImageRef.make("load") { cvipsshim_jpegload_buffer(raw.baseAddress, raw.count, 1, $0) }
            let side = min(image.width, image.height)
            let left = (image.width - side) / 2, top = (image.height - side) / 2
            image = try image.apply("crop") { cvipsshim_extract_area($0, $1, Int32(left), Int32(top), Int32(side), Int32(side)) }
            image = try image.apply("resize") { cvipsshim_resize($0, $1, Double(target) / Double(side)) }
            image = try image.apply("cast") { cvipsshim_cast_uchar($0, $1) }.copiedToMemory()
            var size = 0
            guard let memory = vips_image_write_to_memory(image.pointer, &size) else {
                throw ImagingError.library(Vips.takeErrorMessage())
            }
            defer { g_free(memory) }
            return Pixels(width: image.width, height: image.height, bands: image.bands,
                          data: Array(UnsafeRawBufferPointer(start: memory, count: size)))
        }
    }
}
