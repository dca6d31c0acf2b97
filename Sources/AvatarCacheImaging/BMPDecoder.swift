
/// Windows bitmaps, as Windows address books carry a contact's photo inline (Outlook
/// Express, Windows Contacts): decoded here, since libvips reads BMP only through
/// ImageMagick, whose loaders stay blocked. Like TIFF, only inline, never downloaded.
///
/// The headers Windows and OS/2 write (BITMAPCOREHEADER, BITMAPINFOHEADER and its V2–V5
/// forms); 1, 4 and 8 bits through a palette, 16, 24 and 32 bits direct (bit fields or
/// the default 5-5-5 and BGR(X)); uncompressed or RLE8/RLE4; bottom-up or top-down.
/// Everything is checked against the bytes there are before a pixel buffer is made: the
/// dimensions against `maxPixels`, the palette against where the pixels begin, the rows
/// against the end of the file; run-length data cannot write past the picture.
enum BMPDecoder {
    struct Image {
        var width: Int
        var height: Int
        /// 3 (RGB) or 4 (RGBA), top row first.
        var bands: Int
        var pixels: [UInt8]
    }

    /// The header: what a decode needs, all of it checked.
    struct Header {
        var width: Int
        var height: Int
        var topDown: Bool
        var bits: Int
        var compression: UInt32
        var dataOffset: Int
        var palette: [(UInt8, UInt8, UInt8)]
        var masks: (red: UInt32, green: UInt32, blue: UInt32, alpha: UInt32)
    }

    /// The largest bitmap decoded, in pixels.
    static let maxBitmapPixels = 16_000_000

    static func header(_ bytes: UnsafeRawBufferPointer, maxPixels: Int) throws -> Header {
        func u16(_ offset: Int) -> Int { Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 }
        func u32(_ offset: Int) -> UInt32 {
            UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
        }
        func invalid(_ reason: String) -> ImagingError { .invalidImage("BMP: \(reason)") }
        guard bytes.count >= 26, bytes[0] == 0x42, bytes[1] == 0x4D else { throw invalid("shorter than its headers") }
        let dataOffset = Int(u32(10))
        let headerSize = Int(u32(14))
        let width: Int, height: Int, bits: Int, compression: UInt32
        var paletteEntry = 4, colours = 0
        var masks: (red: UInt32, green: UInt32, blue: UInt32, alpha: UInt32) = (0, 0, 0, 0)
        switch headerSize {
        case 12:
            width = u16(18); height = u16(20); bits = u16(24); compression = 0
            paletteEntry = 3
        case 40, 52, 56, 64, 108, 124:
            guard bytes.count >= 14 + 40 else { throw invalid("shorter than its headers") }
            width = Int(Int32(bitPattern: u32(18)))
            height = Int(Int32(bitPattern: u32(22)))
            bits = u16(28)
            compression = u32(30)
            colours = Int(u32(46))
            if compression == 3 || compression == 6 {
                // The masks follow a 40-byte header, or are part of a longer one.
                let count = compression == 6 || headerSize >= 56 ? 4 : 3
                guard bytes.count >= 54 + 4 * count else { throw invalid("its bit fields run past the end of the file") }
                masks = (u32(54), u32(58), u32(62), count == 4 ? u32(66) : 0)
            }
            // A V4/V5 header's masks count only with bit fields: uncompressed pixels are
            // BGR(X), whatever masks a writer filled in (else a 24-bit picture is all transparent).
        default:
            throw invalid("an unknown header of \(headerSize) bytes")
        }
        guard width > 0, height != 0, height != Int(Int32.min) else { throw invalid("\(width) × \(height) pixels") }
        let rows = abs(height)
        // An address book's photo: at most 16 megapixels whatever --max-pixels allows (the
        // picture is decoded whole, before the decode-memory budget is asked).
        let limit = min(maxPixels, maxBitmapPixels)
        guard width <= 1 << 20, rows <= 1 << 20, width * rows <= limit else {
            throw ImagingError.tooManyPixels(width: width, height: rows, limit: limit)
        }
        switch (bits, compression) {
        case (1, 0), (4, 0), (8, 0), (16, 0), (24, 0), (32, 0), (8, 1), (4, 2), (16, 3), (32, 3), (16, 6), (32, 6): break
        default: throw ImagingError.unsupportedFormat("BMP image of \(bits) bits a pixel with compression \(compression)")
        }
        // The palette, between the headers and the pixels.
        var palette: [(UInt8, UInt8, UInt8)] = []
        if bits <= 8 {
            let count = colours == 0 ? 1 << bits : colours
            guard count <= 1 << bits else { throw invalid("a palette of \(count) colours for \(bits) bits a pixel") }
            let start = 14 + headerSize + (compression == 3 && headerSize == 40 ? 12 : 0)
            let end = start + count * paletteEntry
            guard end <= dataOffset, end <= bytes.count else { throw invalid("its palette of \(count) colours runs past its end") }
            palette = (0..<count).map { index in
                let at = start + index * paletteEntry
                return (bytes[at + 2], bytes[at + 1], bytes[at])
            }
        }
        guard dataOffset >= 14 + min(headerSize, 40), dataOffset <= bytes.count else { throw invalid("its pixels begin past the end of the file") }
        if compression == 1 || compression == 2 {
            // Each two bytes of run-length data make at most 255 pixels: a tiny file
            // declaring a large picture is refused before its buffer is made.
            let (most, overflow) = (bytes.count - dataOffset).multipliedReportingOverflow(by: 128)
            guard overflow || most >= width * rows else {
                throw invalid("\(bytes.count - dataOffset) bytes of run-length data cannot make \(width) × \(rows) pixels")
            }
        }
        if compression == 0 || compression == 3 || compression == 6 {
            let stride = ((bits * width + 31) / 32) * 4
            let (size, overflow) = stride.multipliedReportingOverflow(by: rows)
            guard !overflow, bytes.count - dataOffset >= size else {
                throw invalid("its \(rows) rows of \(stride) bytes run past the end of the file (truncated?)")
            }
        }
        if bits == 16 && compression == 0 { masks = (0x7C00, 0x03E0, 0x001F, 0) }
        if bits == 24 || (bits == 32 && compression == 0) { masks = (0xFF0000, 0x00FF00, 0x0000FF, masks.alpha) }
        return Header(width: width, height: rows, topDown: height < 0, bits: bits, compression: compression,
                      dataOffset: dataOffset, palette: palette, masks: masks)
    }

    static func decode(_ bytes: UnsafeRawBufferPointer, maxPixels: Int) throws -> Image {
        let header = try header(bytes, maxPixels: maxPixels)
        let bands = header.masks.alpha != 0 ? 4 : 3
        let width = header.width, height = header.height
        var pixels = [UInt8](repeating: 0, count: width * height * bands)
        if bands == 4 { for index in stride(from: 3, to: pixels.count, by: 4) { pixels[index] = 255 } }
        func row(_ y: Int) -> Int { header.topDown ? y : height - 1 - y }
        func put(_ x: Int, _ y: Int, _ colour: (UInt8, UInt8, UInt8), alpha: UInt8 = 255) {
            guard x >= 0, x < width, y >= 0, y < height else { return }
            let at = (row(y) * width + x) * bands
            pixels[at] = colour.0; pixels[at + 1] = colour.1; pixels[at + 2] = colour.2
            if bands == 4 { pixels[at + 3] = alpha }
        }
        func paletteColour(_ index: Int) -> (UInt8, UInt8, UInt8) {
            index < header.palette.count ? header.palette[index] : (0, 0, 0)
        }
        switch header.compression {
        case 1, 2:
            decodeRLE(bytes, header: header, put: { x, y, index in put(x, y, paletteColour(index)) })
        default:
            let stride = ((header.bits * width + 31) / 32) * 4
            let fields = [header.masks.red, header.masks.green, header.masks.blue, header.masks.alpha].map(Field.init)
            for y in 0..<height {
                let start = header.dataOffset + y * stride
                for x in 0..<width {
                    switch header.bits {
                    case 1, 4, 8:
                        let bit = x * header.bits
                        let byte = bytes[start + bit / 8]
                        let shift = 8 - header.bits - bit % 8
                        put(x, y, paletteColour(Int(byte >> shift) & ((1 << header.bits) - 1)))
                    default:
                        let at = start + x * header.bits / 8
                        var value: UInt32 = 0
                        for index in 0..<(header.bits / 8) { value |= UInt32(bytes[at + index]) << (8 * index) }
                        put(x, y, (fields[0].value(value), fields[1].value(value), fields[2].value(value)),
                            alpha: bands == 4 ? fields[3].value(value) : 255)
                    }
                }
            }
        }
        return Image(width: width, height: height, bands: bands, pixels: pixels)
    }

    /// One channel's bits in a pixel, scaled to 8 bits.
    struct Field {
        var shift: UInt32 = 0
        var bits: UInt32 = 0
        var mask: UInt32

        init(_ mask: UInt32) {
            self.mask = mask
            guard mask != 0 else { return }
            shift = UInt32(mask.trailingZeroBitCount)
            bits = UInt32((~(mask >> shift)).trailingZeroBitCount)
        }

        func value(_ pixel: UInt32) -> UInt8 {
            guard bits > 0 else { return 0 }
            // A mask need not be one run of bits (a hostile file's is not): its lowest run counts.
            let maximum = (UInt64(1) << UInt64(bits)) - 1
            let raw = UInt64((pixel & mask) >> shift) & maximum
            return UInt8(raw * 255 / maximum)
        }
    }

    /// RLE8 and RLE4: runs and absolute runs of palette indexes, line and picture ends and
    /// deltas; every write is clipped to the picture, and data that ends early leaves the
    /// rest black (as Windows shows such a file).
    static func decodeRLE(_ bytes: UnsafeRawBufferPointer, header: Header, put: (Int, Int, Int) -> Void) {
        let four = header.compression == 2
        var position = header.dataOffset, x = 0, y = 0
        while position + 1 < bytes.count, y < header.height {
            let count = Int(bytes[position]), value = bytes[position + 1]
            position += 2
            if count > 0 {
                for index in 0..<count {
                    let colour = four ? Int(index % 2 == 0 ? value >> 4 : value & 0x0F) : Int(value)
                    put(x, y, colour)
                    x += 1
                }
                continue
            }
            switch value {
            case 0: x = 0; y += 1
            case 1: return
            case 2:
                guard position + 1 < bytes.count else { return }
                x += Int(bytes[position]); y += Int(bytes[position + 1])
                position += 2
            default:
                let length = Int(value)
                let dataBytes = four ? (length + 1) / 2 : length
                guard position + dataBytes <= bytes.count else { return }
                for index in 0..<length {
                    let byte = bytes[position + (four ? index / 2 : index)]
                    let colour = four ? Int(index % 2 == 0 ? byte >> 4 : byte & 0x0F) : Int(byte)
                    put(x, y, colour)
                    x += 1
                }
                position += dataBytes + (dataBytes % 2)
            }
        }
    }
}
