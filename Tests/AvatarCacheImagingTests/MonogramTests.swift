import CTestZlib
import Foundation
import Testing
@testable import AvatarCacheImaging
import AvatarCacheImagingTestSupport
@testable import AvatarCacheModel
@testable import AvatarCacheMonograms
@testable import AvatarCacheSupport
import AvatarCacheTestKit

@Suite struct MonogramTests {
    let renderer = MonogramRenderer(tiers: [330, 900])

    func spec(_ initials: String, _ background: String, glyph: MonogramGlyph? = nil) -> MonogramSpec {
        MonogramSpec(initials: initials, glyph: glyph, background: background, foreground: AvatarColor.textColor(on: background))
    }

    @Test func sizesAndTransparentCorners() throws {
        let tiers = try renderer.render(spec("AL", "#007AFF"))
        #expect(tiers.map(\.side) == [330, 900])
        for tier in tiers {
            let pixels = try Pixels(decoding: tier.bytes)
            #expect(pixels.width == tier.side && pixels.height == tier.side && pixels.bands == 4)
            #expect(pixels.pixel(0, 0)[3] == 0, "outside the circle is transparent")
            #expect(pixels.pixel(tier.side / 2, tier.side / 8)[3] == 255, "inside the circle is opaque")
        }
    }

    @Test func jpegMonogramsFillTheSquare() throws {
        let tiers = try MonogramRenderer(tiers: [330], outputFormat: .jpeg).render(spec("AL", "#34C759"))
        let pixels = try Pixels(decoding: tiers[0].bytes)
        #expect(pixels.bands == 3)
        let corner = pixels.pixel(0, 0)
        #expect(abs(Int(corner[0]) - 0x34) < 8 && abs(Int(corner[1]) - 0xC7) < 8 && abs(Int(corner[2]) - 0x59) < 8)
    }

    /// Monograms are composed in one 8-bit pass; libvips' float compositing is the
    /// reference: the same picture within rounding, in PNG (disc) and JPEG (square).
    @Test func theOnePassCompositionMatchesLibvips() throws {
        for format in [OutputFormat.png, .jpeg] {
            let renderer = MonogramRenderer(tiers: [330], outputFormat: format)
            for (initials, colour) in [("AL", "#007AFF"), ("W", "#FFCC00"), ("", "#AF52DE")] {
                let spec = spec(initials, colour)
                let fast = try Pixels(decoding: renderer.render(spec)[0].bytes)
                let background = MonogramRenderer.rgb(spec.background)
                let mask = try DiscMask.shared.mask(side: 330, filled: format == .jpeg)
                let reference = try Pixels(decoding: renderer.composite(spec, mask: mask, text: renderer.textImage(spec, side: 330),
                                                                        background: background, side: 330))
                #expect(fast.bands == reference.bands && fast.bands == (format == .jpeg ? 3 : 4))
                // What shows: colour weighted by alpha (a fully transparent pixel's colour
                // is not seen: libvips leaves it black, the one pass the disc's colour),
                // and alpha itself.
                var total = 0.0
                for y in 0..<330 {
                    for x in 0..<330 {
                        let a = fast.pixel(x, y), b = reference.pixel(x, y)
                        let alphaA = fast.bands == 4 ? Double(a[3]) / 255 : 1, alphaB = reference.bands == 4 ? Double(b[3]) / 255 : 1
                        for band in 0..<3 { total += abs(Double(a[band]) * alphaA - Double(b[band]) * alphaB) }
                        if fast.bands == 4 { total += abs(Double(a[3]) - Double(b[3])) }
                    }
                }
                let difference = total / Double(330 * 330 * fast.bands)
                // JPEG adds its own error on both sides; PNG is exact but for rounding.
                #expect(difference < (format == .jpeg ? 1.5 : 0.5), "\(format) \(initials): \(difference) levels apart on average")
                // The text is there: the centre row holds pixels far from the background.
                let row = (0..<330).map { fast.pixel($0, 165) }
                #expect(row.contains { abs(Int($0[0]) - Int(background.0)) + abs(Int($0[1]) - Int(background.1)) > 100 })
            }
        }
    }

    /// A monogram is two colours: its PNG is indexed (colour type 3, a palette with
    /// transparency, 4 bits a pixel), under 30 % of the same picture as RGBA, and under
    /// 12,000 bytes a pair on average; a colour emoji is not two colours, and stays RGBA.
    @Test func pngMonogramsAreIndexedAndSmall() throws {
        var pairs: [Int] = [], rgbaPairs: [Int] = []
        for (initials, colour) in [("AL", "#007AFF"), ("MW", "#FF3B30"), ("W", "#FFCC00"), ("黄世", "#34C759"), ("ДК", "#AF52DE"), ("", "#5856D6")] {
            let spec = spec(initials, colour)
            let tiers = try renderer.render(spec)
            for tier in tiers {
                #expect(tier.bytes.count > 33 && tier.bytes[25] == 3, "\(initials) \(tier.side): an indexed PNG")
                #expect(tier.bytes[24] == 4, "\(initials) \(tier.side): 4 bits a pixel")
                let pixels = try Pixels(decoding: tier.bytes)
                #expect(pixels.bands == 4 && pixels.pixel(0, 0)[3] == 0 && pixels.pixel(tier.side / 2, tier.side / 8)[3] == 255)
                let alphas = Set(stride(from: 3, to: pixels.data.count, by: 4).map { pixels.data[$0] })
                #expect(alphas == [0, 64, 128, 192, 255], "\(initials) \(tier.side): alpha levels \(alphas.sorted())")
            }
            pairs.append(tiers.reduce(0) { $0 + $1.bytes.count })
            rgbaPairs.append(try tiers.reduce(0) { total, tier in
                let mask = try DiscMask.shared.mask(side: tier.side, filled: false)
                let rgba = try renderer.composite(spec, mask: mask, text: renderer.textImage(spec, side: tier.side),
                                                  background: MonogramRenderer.rgb(spec.background), side: tier.side)
                #expect(rgba[25] == 6)
                return total + rgba.count
            })
        }
        // The disc's edge, in every format, is the box filter's five coverages, which the
        // indexed PNG keeps exactly: no ring of faint alpha outside the disc, no uneven
        // one inside (lanczos' ringing).
        for side in [330, 900] {
            let mask = try DiscMask.shared.mask(side: side, filled: false)
            let levels = Set(try Pixels(mask).data)
            #expect(levels == [0, 64, 128, 192, 255], "\(side): the mask's levels \(levels.sorted())")
        }
        let average = pairs.reduce(0, +) / pairs.count, rgbaAverage = rgbaPairs.reduce(0, +) / rgbaPairs.count
        print("monogram pairs (330 + 900 px): indexed PNG \(pairs) bytes, \(average) on average; RGBA \(rgbaAverage) on average")
        #expect(average * 10 < rgbaAverage * 3, "indexed \(pairs), RGBA \(rgbaPairs)")
        // The disc's bands deflated once at level 9, the text's band at level 9 looking 256
        // matches deep: 10.9 KB a pair here; the whole picture at level 6 was 13.0 KB.
        #expect(average < 12_000, "indexed \(pairs)")
        let emoji = try renderer.render(spec("😀", "#007AFF"))
        #expect(emoji[0].bytes[25] == 6, "a colour emoji is RGBA (colour type 6)")
    }

    /// The disc's rows above and below the text are deflated once per size and process
    /// and spliced around each monogram's own band of text: every PNG's image data is one
    /// whole zlib stream (inflated here, its Adler-32, taken over all the rows, checked)
    /// of exactly its rows, whether its bands were deflated for it or kept from another
    /// monogram (text at other heights, no text at all, both sizes); a monogram drawn
    /// again, from kept bands, is the same file.
    @Test func monogramStreamsAreWholeWithTheDiscsBandsSplicedIn() throws {
        let specs = [spec("AL", "#007AFF"), spec("ÉQ", "#FF3B30"), spec("gy", "#34C759"), spec("", "#5856D6"),
                     spec("李小", "#FF9500"), spec("Ło", "#30B0C7"), spec("AL", "#FF2D55")]
        var files: [String: [[UInt8]]] = [:]
        for round in 0..<2 {
            for spec in specs {
                let tiers = try renderer.render(spec)
                for tier in tiers {
                    let stride = (tier.side + 1) / 2 + 1
                    var rows = [UInt8](repeating: 0xAA, count: tier.side * stride + 64)
                    let inflated = tier.bytes.withUnsafeBufferPointer { png in
                        rows.withUnsafeMutableBufferPointer { ctestzlib_inflate_png(png.baseAddress, png.count, $0.baseAddress, $0.count) }
                    }
                    #expect(inflated == tier.side * stride, "\(spec.key) \(tier.side): \(inflated) bytes inflated")
                    #expect((0..<tier.side).allSatisfy { rows[$0 * stride] == 0 }, "\(spec.key) \(tier.side): a row without its filter byte")
                }
                if round == 0 {
                    files[spec.key] = tiers.map(\.bytes)
                } else {
                    #expect(files[spec.key] == tiers.map(\.bytes), "\(spec.key): drawn again, another file")
                }
            }
        }
        // The check sees a broken stream: one byte of the checksum changed.
        var broken = try renderer.render(specs[0])[0].bytes
        let end = broken.count - 12 - 4 - 1   // IEND (12), IDAT's CRC (4): the checksum's last byte
        broken[end] ^= 1
        var room = [UInt8](repeating: 0, count: 400 * 400)
        let result = broken.withUnsafeBufferPointer { png in
            room.withUnsafeMutableBufferPointer { ctestzlib_inflate_png(png.baseAddress, png.count, $0.baseAddress, $0.count) }
        }
        #expect(result == -1)
    }

    /// The contrast measured on the rendered image, for every palette colour: the
    /// background is the colour at the top of the disc; the text colour is the pixel
    /// farthest from it.
    @Test func measuredContrastIsAtLeastAAForEveryPaletteColour() throws {
        for color in AvatarColor.palette {
            let pixels = try Pixels(decoding: try renderer.render(spec("MW", color))[1].bytes)
            let background = pixels.pixel(pixels.width / 2, pixels.height / 10)
            var farthest = background, distance = 0
            for y in stride(from: pixels.height / 3, to: pixels.height * 2 / 3, by: 2) {
                for x in stride(from: pixels.width / 4, to: pixels.width * 3 / 4, by: 2) {
                    let p = pixels.pixel(x, y)
                    let d = (0..<3).reduce(0) { $0 + abs(Int(p[$1]) - Int(background[$1])) }
                    if d > distance { distance = d; farthest = p }
                }
            }
            let hex = { (p: [UInt8]) in String(format: "#%02X%02X%02X", p[0], p[1], p[2]) }
            let measured = AvatarColor.contrast(hex(farthest), hex(background))
            print("monogram contrast \(color): text \(hex(farthest)) on \(hex(background)) = \(String(format: "%.2f", measured)):1")
            #expect(measured >= 4.5, "\(color): text \(hex(farthest)) on \(hex(background)) is \(measured):1")
        }
    }

    @Test func glyphsAndScriptsDrawInk() throws {
        for spec in [spec("", "#5856D6", glyph: .person), spec("", "#5856D6", glyph: .group), spec("김민", "#30B0C7"),
                     spec("李小", "#FF9500"), spec("अश", "#AF52DE"), spec("ما", "#FF2D55"), spec("🙂S", "#FF3B30")] {
            let pixels = try Pixels(decoding: try renderer.render(spec)[0].bytes)
            let background = pixels.pixel(pixels.width / 2, pixels.height / 12)
            var differing = 0
            for y in stride(from: pixels.height / 4, to: pixels.height * 3 / 4, by: 3) {
                for x in stride(from: pixels.width / 4, to: pixels.width * 3 / 4, by: 3) where pixels.pixel(x, y) != background {
                    differing += 1
                }
            }
            #expect(differing > 50, "\(spec.text) drew almost nothing")
        }
    }

    /// Without a covering font, Pango draws boxes: every script the samples use must
    /// have a font installed (scripts/setup installs them).
    @Test(arguments: [("Hangul", "AC00"), ("CJK", "674E"), ("Devanagari", "0905"), ("Arabic", "0645"), ("emoji", "1F642")])
    func aFontCoversEachScript(script: String, codepoint: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/fc-list")
        process.arguments = [":charset=\(codepoint)", "family"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(!output.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "no font covers \(script) (U+\(codepoint))")
    }

    @Test func keyIsStableAndDistinct() {
        #expect(spec("AL", "#007AFF").key == "monogram:v1:AL:#007AFF:#000000")
        #expect(spec("", "#007AFF", glyph: .person).key != spec("", "#007AFF", glyph: .group).key)
    }

    @Test func writeContactSheetForReview() throws {
        // The sheet a person reviews (AVATAR_CACHE_MONOGRAM_SHEET names where it goes; a
        // temporary folder otherwise): every script's monogram drawn, as a PNG of the tier's
        // size whose pixels are not all one colour (the letters are there).
        let temporary = try Fixtures.temporaryDirectory("monogram-sheet")
        defer { try? FileManager.default.removeItem(at: temporary) }
        let directory = ProcessInfo.processInfo.environment["AVATAR_CACHE_MONOGRAM_SHEET"] ?? temporary.path
        var sheet = ["AL", "BS", "김민", "李小", "अश", "ما", "🙂S", "WW"].enumerated().map { index, initials in
            spec(initials, AvatarColor.palette[index % 8])
        }
        sheet.append(spec("", "#30B0C7", glyph: .group))
        for (index, monogram) in sheet.enumerated() {
            let file = try renderer.render(monogram)[0]
            try Data(file.bytes).write(to: URL(fileURLWithPath: directory).appendingPathComponent("m\(index).png"))
            #expect(file.bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) || file.bytes.starts(with: [0xFF, 0xD8]), "m\(index): an image")
            let pixels = try Pixels(decoding: file.bytes)
            #expect(pixels.width == 330 && pixels.height == 330 && Set(pixels.data).count > 2, "m\(index): drawn")
        }
        #expect(FileManager.default.fileExists(atPath: directory + "/m8.png"))
    }
}
