import Foundation
import Testing
@testable import AvatarCacheExports
@testable import AvatarCacheImaging
@testable import AvatarCacheSupport
import AvatarCacheTestKit

/// Issue 50: Windows address books carry a contact's photo as an inline BMP. It is decoded
/// by our own decoder (libvips would hand BMP to ImageMagick, which stays blocked), only
/// inline, as TIFF is; every form Windows and OS/2 write; bombs refused before a pixel
/// buffer is made.
@Suite struct InlineBMPTests {
    /// The picture every bitmap here holds: four quadrants, red, green, blue and white
    /// (top left, top right, bottom left, bottom right).
    static func colour(_ x: Int, _ y: Int, width: Int, height: Int) -> (UInt8, UInt8, UInt8) {
        switch (x < width / 2, y < height / 2) {
        case (true, true): return (255, 0, 0)
        case (false, true): return (0, 255, 0)
        case (true, false): return (0, 0, 255)
        case (false, false): return (255, 255, 255)
        }
    }

    enum Form: String, CaseIterable {
        case rgb24, rgb24TopDown, bgrx32, bitfields565, alphaV5, palette8, palette4, palette1, rle8, rle4, os2Core
    }

    /// A bitmap of `form`, `width` × `height`, as Windows (or OS/2) writes it.
    static func bitmap(_ form: Form, width: Int = 16, height: Int = 12) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func u32(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24 & 0xFF)] }
        let palette: [(UInt8, UInt8, UInt8)] = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255)]
        func index(_ x: Int, _ y: Int) -> Int {
            let c = colour(x, y, width: width, height: height)
            return palette.firstIndex { $0 == c }!
        }
        var bits = 24, compression = 0, headerSize = 40, topDown = false
        var masks: [Int] = []
        switch form {
        case .rgb24: break
        case .rgb24TopDown: topDown = true
        case .bgrx32: bits = 32
        case .bitfields565: bits = 16; compression = 3; masks = [0xF800, 0x07E0, 0x001F]
        case .alphaV5: bits = 32; compression = 3; headerSize = 124; masks = [0x00FF0000, 0x0000FF00, 0x000000FF, 0xFF000000]
        case .palette8, .rle8: bits = 8; compression = form == .rle8 ? 1 : 0
        case .palette4, .rle4: bits = 4; compression = form == .rle4 ? 2 : 0
        case .palette1: bits = 1
        case .os2Core: headerSize = 12
        }
        // Rows, bottom-up unless top-down.
        var data: [UInt8] = []
        let rowOrder = topDown ? Array(0..<height) : Array((0..<height).reversed())
        if compression == 1 || compression == 2 {
            for y in rowOrder {
                // Runs of equal indexes, two to a run in RLE4 as Windows packs them.
                var x = 0
                while x < width {
                    var run = 1
                    while x + run < width, run < 255, index(x + run, y) == index(x, y) { run += 1 }
                    let value = index(x, y)
                    data += [UInt8(run), UInt8(compression == 2 ? value << 4 | value : value)]
                    x += run
                }
                data += [0, 0]
            }
            data += [0, 1]
        } else {
            let stride = ((bits * width + 31) / 32) * 4
            for y in rowOrder {
                var row = [UInt8](repeating: 0, count: stride)
                for x in 0..<width {
                    let (r, g, b) = colour(x, y, width: width, height: height)
                    switch bits {
                    case 1:
                        // A two-colour palette: red and white; blue and green read as red here.
                        let white = index(x, y) == 3
                        if white { row[x / 8] |= 0x80 >> (x % 8) }
                    case 4: row[x / 2] |= UInt8(index(x, y) << (x % 2 == 0 ? 4 : 0))
                    case 8: row[x] = UInt8(index(x, y))
                    case 16:
                        let value = Int(r >> 3) << 11 | Int(g >> 2) << 5 | Int(b >> 3)
                        row[x * 2] = UInt8(value & 0xFF); row[x * 2 + 1] = UInt8(value >> 8)
                    case 24: row[x * 3] = b; row[x * 3 + 1] = g; row[x * 3 + 2] = r
                    default: row[x * 4] = b; row[x * 4 + 1] = g; row[x * 4 + 2] = r; row[x * 4 + 3] = form == .alphaV5 ? 128 : 0
                    }
                }
                data += row
            }
        }
        let colours = bits == 1 ? [(UInt8(255), UInt8(0), UInt8(0)), (UInt8(255), UInt8(255), UInt8(255))] : bits <= 8 ? palette : []
        var info: [UInt8]
        if headerSize == 12 {
            info = u32(12) + u16(width) + u16(height) + u16(1) + u16(bits)
        } else {
            info = u32(headerSize) + u32(width) + u32(topDown ? -height : height) + u16(1) + u16(bits) + u32(compression)
                + u32(data.count) + u32(2835) + u32(2835) + u32(colours.count) + u32(0)
            if headerSize > 40 {
                var extra = masks.flatMap(u32) + [UInt8](repeating: 0, count: 16 - masks.count * 4)
                extra += [UInt8](repeating: 0, count: headerSize - 40 - extra.count)
                info += extra
            } else {
                info += masks.flatMap(u32)
            }
        }
        var table: [UInt8] = []
        for entry in colours {
            table += [entry.2, entry.1, entry.0]
            if headerSize != 12 { table.append(0) }
        }
        let offset = 14 + info.count + table.count
        var file: [UInt8] = Array("BM".utf8)
        file += u32(offset + data.count)
        file += u32(0)
        file += u32(offset)
        file += info
        file += table
        file += data
        return file
    }

    @Test(arguments: Form.allCases)
    func everyFormWindowsWritesDecodes(form: Form) throws {
        let bytes = Self.bitmap(form)
        #expect(bytes.withUnsafeBytes { ImageFormat.sniff($0) } == .bmp)
        let image = try bytes.withUnsafeBytes { try BMPDecoder.decode($0, maxPixels: 50_000_000) }
        #expect(image.width == 16 && image.height == 12)
        #expect(image.bands == (form == .alphaV5 ? 4 : 3))
        for (x, y) in [(0, 0), (15, 0), (0, 11), (15, 11), (7, 5), (8, 6)] {
            let at = (y * 16 + x) * image.bands
            var expected = Self.colour(x, y, width: 16, height: 12)
            if form == .palette1, expected != (255, 255, 255) { expected = (255, 0, 0) }
            let got = (image.pixels[at], image.pixels[at + 1], image.pixels[at + 2])
            // 5-6-5 keeps 5 or 6 bits of a channel: 255 comes back as 255, 0 as 0.
            #expect(got == expected, "\(form) at \(x),\(y): \(got)")
            if form == .alphaV5 { #expect(image.pixels[at + 3] == 128) }
        }
    }

    /// A V5 header whose writer filled in masks for uncompressed 24-bit pixels: opaque,
    /// as Windows shows it (the masks count only with bit fields).
    @Test func uncompressedPixelsIgnoreAV5HeadersMasks() throws {
        var bytes = Self.bitmap(.rgb24)
        // Make it a 124-byte V5 header with an alpha mask, the pixels unchanged.
        let v5: [UInt8] = Array(bytes[14..<54]) + [0, 0, 0xFF, 0, 0, 0xFF, 0, 0, 0xFF, 0, 0, 0, 0, 0, 0, 0xFF] + [UInt8](repeating: 0, count: 68)
        var header = v5
        header.replaceSubrange(0..<4, with: [124, 0, 0, 0])
        let pixels = Array(bytes[54...])
        let offset = 14 + 124
        bytes = Array("BM".utf8) + [UInt8(truncatingIfNeeded: offset + pixels.count), UInt8(truncatingIfNeeded: (offset + pixels.count) >> 8), 0, 0, 0, 0, 0, 0]
            + [UInt8(offset), 0, 0, 0] + header + pixels
        let image = try bytes.withUnsafeBytes { try BMPDecoder.decode($0, maxPixels: 50_000_000) }
        #expect(image.bands == 3)
        #expect(Array(image.pixels[0..<3]) == [255, 0, 0])
    }

    /// Through the renderer: inline, every tier made; downloaded, refused before decoding.
    @Test func inlineOnlyAndEveryTierMade() throws {
        let renderer = try AvatarRenderer(tiers: [32, 8], maxPixels: 50_000_000)
        let bytes = Self.bitmap(.rgb24, width: 64, height: 48)
        let avatar = try renderer.render(bytes, inline: true)
        #expect(avatar.format == .bmp && avatar.sourceWidth == 64 && avatar.sourceHeight == 48)
        #expect(avatar.tiers.map(\.side).sorted() == [8, 32])
        #expect(throws: ImagingError.self) { try renderer.render(bytes, inline: false) }
        do {
            _ = try renderer.render(bytes, inline: false)
        } catch {
            #expect("\(error)".contains("BMP image (decoded only when an export carries it inline"), "\(error)")
        }
    }

    /// A Windows address book's card with its photo as an inline BMP: read as the photo.
    @Test func aVCardsInlineBMPIsItsPhoto() throws {
        let photo = Self.bitmap(.rgb24, width: 40, height: 40)
        // Folded as Outlook Express writes it: 2.1's BASE64, lines of 64 after a blank.
        let base64 = Data(photo).base64EncodedString()
        let lines = stride(from: 0, to: base64.count, by: 64).map { start -> String in
            let from = base64.index(base64.startIndex, offsetBy: start)
            return " " + String(base64[from..<base64.index(from, offsetBy: min(64, base64.count - start))])
        }
        let card = "BEGIN:VCARD\r\nVERSION:2.1\r\nN:Example;Ann\r\nFN:Ann Example\r\nPHOTO;TYPE=BMP;ENCODING=BASE64:\r\n"
            + lines.joined(separator: "\r\n") + "\r\n\r\nEND:VCARD\r\n"
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("bmp-\(UUID().uuidString).vcf")
        try card.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let read = try Fixtures.read(JamiReader(path: file.path))
        guard case .inline(let inline)? = read.profiles.first?.photo else {
            Issue.record("no inline photo: \(read)")
            return
        }
        #expect(inline.bytes == photo)
        let avatar = try AvatarRenderer(tiers: [20], maxPixels: 50_000_000).render(inline.bytes, inline: true)
        #expect(avatar.format == .bmp)
    }

    /// Bombs and damage: each refused with a reason, before a pixel buffer is made (the
    /// dimensions against the pixel limit, the palette and the rows against the bytes
    /// there are); run-length data that runs past the picture is clipped.
    @Test func bombsAreRefusedBeforeAnyPixelBufferIsMade() throws {
        func u32(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24 & 0xFF)] }
        func patched(_ bytes: [UInt8], at offset: Int, _ value: [UInt8]) -> [UInt8] {
            var copy = bytes
            copy.replaceSubrange(offset..<(offset + value.count), with: value)
            return copy
        }
        let good = Self.bitmap(.rgb24)
        let cases: [(String, [UInt8], String)] = [
            ("huge dimensions", patched(patched(good, at: 18, u32(1 << 20)), at: 22, u32(1 << 20)), "pixels"),
            ("dimensions over the limit", patched(patched(good, at: 18, u32(10_000)), at: 22, u32(10_000)), "pixels"),
            ("negative width", patched(good, at: 18, u32(-5)), "BMP:"),
            ("rows past the end", Array(good.prefix(good.count - 40)), "run past the end of the file"),
            ("palette past its end", patched(Self.bitmap(.palette8), at: 46, u32(256)), "palette"),
            ("palette larger than its bits allow", patched(Self.bitmap(.palette4), at: 46, u32(200)), "palette"),
            ("an unknown header", patched(good, at: 14, u32(77)), "header"),
            ("pixels begin past the end", patched(good, at: 10, u32(1 << 30)), "past the end"),
            ("unsupported compression", patched(good, at: 30, u32(4)), "compression"),
            ("cut inside its headers", Array(good.prefix(30)), "shorter than its headers"),
        ]
        for (name, bytes, reason) in cases {
            do {
                _ = try bytes.withUnsafeBytes { try BMPDecoder.decode($0, maxPixels: 50_000_000) }
                Issue.record("\(name): decoded")
            } catch {
                #expect("\(error)".contains(reason), "\(name): \(error)")
            }
        }
        // A few bytes of run-length data declaring a large picture: refused before its buffer.
        var rleBomb = Self.bitmap(.rle8)
        rleBomb.replaceSubrange(18..<26, with: u32(4000) + u32(4000))
        do {
            _ = try rleBomb.withUnsafeBytes { try BMPDecoder.decode($0, maxPixels: 50_000_000) }
            Issue.record("an RLE bomb decoded")
        } catch {
            #expect("\(error)".contains("run-length data cannot make 4000 × 4000 pixels"), "\(error)")
        }
        // Past 16 megapixels an inline bitmap is refused whatever --max-pixels allows.
        let wide = patched(patched(good, at: 18, u32(5000)), at: 22, u32(5000))
        #expect(throws: ImagingError.self) { try wide.withUnsafeBytes { try BMPDecoder.decode($0, maxPixels: 50_000_000) } }
        // Runs that overflow the row and the picture, and a delta past it: clipped.
        var rle = Self.bitmap(.rle8)
        let dataStart = Int(rle[10]) | Int(rle[11]) << 8
        rle.replaceSubrange(dataStart..<(dataStart + 4), with: [255, 1, 255, 2])
        rle += [0, 2, 200, 200, 255, 3, 0, 1]
        let image = try rle.withUnsafeBytes { try BMPDecoder.decode($0, maxPixels: 50_000_000) }
        #expect(image.pixels.count == 16 * 12 * 3)
        HostileLedger.record("images", "BMP bombs", tried: cases.map(\.0).joined(separator: "; ") + "; RLE runs and deltas past the picture",
                             count: cases.count + 1, outcome: "refused with a reason before any pixel buffer; RLE clipped to the picture")
    }
}
