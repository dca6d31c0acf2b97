import Foundation
import Testing
@testable import AvatarCacheImaging
import AvatarCacheImagingTestSupport
@testable import AvatarCacheSupport
import AvatarCacheTestKit

/// Hostile photo bytes through the renderer: risky formats, pixel bombs, truncated and
/// mutated photos, metadata stripped (hostile URLs and servers: AvatarCachePipelineTests'
/// HostileNetworkTests). Beside the inline BMP tests, whose bitmaps it uses.
@Suite struct HostileImageTests {
    let renderer = AvatarRenderer(tiers: [330, 900], maxPixels: 50_000_000)

    func classify(_ bytes: [UInt8]) -> FailureClass? {
        do { _ = try renderer.render(bytes); return nil } catch let error as ImagingError { return SourceFailure(error).failureClass } catch { return .network }
    }

    @Test func riskyFormatsAreRefusedWithoutParsing() throws {
        let samples: [(String, [UInt8])] = [
            ("SVG", Array(#"<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><image href="file:///etc/passwd"/></svg>"#.utf8)),
            ("PDF", Array("%PDF-1.7\n1 0 obj<</Type/Catalog>>endobj\n".utf8)),
            ("PSD", Array("8BPS".utf8) + [0, 1] + [UInt8](repeating: 0, count: 20)),
            ("BMP", Array("BM".utf8) + [UInt8](repeating: 0, count: 60)),
            ("BMP (a whole one, downloaded)", InlineBMPTests.bitmap(.rgb24)),
            ("TIFF", [0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0] + [UInt8](repeating: 0, count: 30)),
            ("FITS", Array("SIMPLE  =                    T".utf8)),
            ("HTML", Array("<!DOCTYPE html><html></html>".utf8)),
            ("MP4 (ftyp isom)", [0, 0, 0, 24] + Array("ftypisom".utf8) + [UInt8](repeating: 0, count: 12)),
            ("empty", []),
        ]
        for (name, bytes) in samples {
            #expect(classify(bytes) == .unsupportedFormat, "\(name)")
        }
        HostileLedger.record("images", "risky formats", tried: samples.map(\.0).joined(separator: ", "), count: samples.count, outcome: "unsupportedFormat from the leading bytes; no libvips loader saw them (a downloaded TIFF and BMP included: TIFF and BMP are decoded only when an export carries them inline; every loader but JPEG, PNG, WebP, GIF, HEIF and that TIFF one is blocked)")
    }

    @Test func decompressionBombsAreRefusedFromTheHeader() throws {
        let png = PNGBomb.make(width: 100_000, height: 100_000)
        let jpeg = JPEGBomb.make(width: 65_000, height: 65_000, from: try Fixtures.photo("chelsea-96.jpg"))
        let gifBomb = GIFBomb.make(width: 65_535, height: 65_535)
        var times: [Double] = []
        for (name, bytes) in [("PNG", png), ("JPEG", jpeg), ("GIF", gifBomb)] {
            let started = Date()
            #expect(classify(bytes) == .tooManyPixels, "\(name) bomb")
            times.append(Date().timeIntervalSince(started))
        }
        #expect(times.allSatisfy { $0 < 1 }, "refused before decoding: \(times)")
        HostileLedger.record("images", "pixel bombs", tried: "PNG 100,000², JPEG 65,000², GIF 65,535² headers on tiny files", count: 3, outcome: "tooManyPixels in \(String(format: "%.0f", (times.max() ?? 0) * 1000)) ms, nothing allocated for the pixels")
    }

    @Test func truncatedAndCorruptImagesAreInvalid() throws {
        let jpeg = try Fixtures.photo("retina.jpg"), png = try Fixtures.photo("camera.png")
        let gif = try Fixtures.photo("coins.gif"), webp = try Fixtures.photo("motorcycle.webp")
        var random = SeededRandom(seed: 7)
        let cases: [(String, [UInt8])] = [
            ("JPEG cut at 50 %", Array(jpeg.prefix(jpeg.count / 2))),
            ("JPEG cut after the header", Array(jpeg.prefix(700))),
            ("PNG cut at 60 %", Array(png.prefix(png.count * 6 / 10))),
            ("GIF cut at 40 %", Array(gif.prefix(gif.count * 4 / 10))),
            ("WebP cut at 50 %", Array(webp.prefix(webp.count / 2))),
            ("JPEG magic + noise", [0xFF, 0xD8, 0xFF] + (0..<5000).map { _ in random.byte() }),
            ("PNG magic + noise", Array(png.prefix(8)) + (0..<5000).map { _ in random.byte() }),
        ]
        for (name, bytes) in cases {
            #expect(classify(bytes) == .invalidImage, "\(name)")
        }
        HostileLedger.record("images", "truncated and corrupt", tried: cases.map(\.0).joined(separator: "; "), count: cases.count, outcome: "invalidImage; nothing half-decoded written")
    }

    /// The decoders this project calls itself, beside libvips' loaders: libheif for
    /// HEIC, libjpeg-turbo's centre decoder and encoder, lcms for embedded profiles.
    /// Seeded mutants of each (bytes flipped, spans cut or repeated): every one either
    /// renders square tiers that decode again or is an image error. A crash would end
    /// the test process.
    @Test func mutatedPhotosThroughTheDirectDecodersFailCleanly() throws {
        let fixtures = Fixtures.repositoryRoot.appendingPathComponent("Tests/Fixtures/photos")
        let sources: [(String, [UInt8])] = [
            ("HEIC", try [UInt8](Data(contentsOf: fixtures.appendingPathComponent("chelsea.heic")))),
            ("progressive JPEG", try [UInt8](Data(contentsOf: fixtures.appendingPathComponent("astronaut-progressive.jpg")))),
            ("CMYK JPEG with ICC", try Fixtures.photo("coffee-cmyk.jpg")),
        ]
        var random = SeededRandom(seed: 2026)
        var rendered = 0, refused = 0, tried = 0
        for (name, original) in sources {
            for round in 0..<40 {
                var bytes = original
                switch round % 4 {
                case 0:   // a few bytes flipped past the first 16 (the signature stays)
                    for _ in 0..<(1 + random.below(8)) { bytes[16 + random.below(bytes.count - 16)] ^= UInt8(1 + random.below(255)) }
                case 1:   // cut anywhere past the signature
                    bytes = Array(bytes.prefix(16 + random.below(bytes.count - 16)))
                case 2:   // a span repeated
                    let start = 16 + random.below(bytes.count - 16), length = random.below(min(4096, bytes.count - start))
                    bytes.insert(contentsOf: bytes[start..<(start + length)], at: start)
                default:  // a run of noise over the middle
                    let start = 16 + random.below(bytes.count - 16)
                    for index in start..<min(bytes.count, start + 64) { bytes[index] = random.byte() }
                }
                tried += 1
                do {
                    let avatar = try renderer.render(bytes)
                    for tier in avatar.tiers {
                        let pixels = try Pixels(decoding: tier.bytes)
                        #expect(pixels.width == tier.side && pixels.height == tier.side, "\(name) mutant \(round)")
                    }
                    rendered += 1
                } catch is ImagingError {
                    refused += 1
                }
            }
        }
        #expect(rendered + refused == tried)
        #expect(refused > 0, "cut files must be refused")
        HostileLedger.record("images", "mutated photos through the direct decoders", tried: "seeded mutants of a HEIC (libheif), a progressive JPEG (libjpeg-turbo) and a CMYK JPEG with its ICC profile (lcms): bytes flipped, cut, spans repeated, noise", count: tried, outcome: "\(rendered) rendered to square tiers that decode again, \(refused) refused as image errors; no crash")
    }

    /// A real HEIC whose `ispe` boxes (the coded size of each item) declare 10,000 ×
    /// 10,000 pixels, twice `--max-pixels`: refused from the header, before anything is
    /// decoded (libheif itself refuses only over 16,384 a side).
    @Test func aHEICPixelBombIsRefusedFromTheHeader() throws {
        var heic = try [UInt8](Data(contentsOf: Fixtures.repositoryRoot
            .appendingPathComponent("Tests/Fixtures/photos/chelsea.heic")))
        let ispe = Array("ispe".utf8)
        let boxes = (0..<(heic.count - 16)).filter { Array(heic[$0..<($0 + 4)]) == ispe }
        #expect(!boxes.isEmpty, "the fixture has ispe boxes")
        // ispe: type, version and flags (4 bytes), width (4), height (4).
        for at in boxes {
            for (offset, value) in [(at + 8, UInt32(10_000)), (at + 12, UInt32(10_000))] {
                for byte in 0..<4 { heic[offset + byte] = UInt8(truncatingIfNeeded: value >> (24 - 8 * byte)) }
            }
        }
        let started = Date()
        #expect(classify(heic) == .tooManyPixels)
        #expect(Date().timeIntervalSince(started) < 1)
        HostileLedger.record("images", "HEIC pixel bomb", tried: "a real HEIC whose ispe boxes declare 10,000²", count: 1, outcome: "tooManyPixels from the header, nothing decoded")
    }

    @Test func outputsCarryNoMetadata() throws {
        // coffee-rotated.jpg carries EXIF; coffee-cmyk.jpg a 960 KB ICC profile.
        for name in ["coffee-rotated.jpg", "coffee-cmyk.jpg", "chelsea-disc.png", "animated.gif"] {
            for tier in try renderer.render(try Fixtures.photo(name)).tiers {
                let text = String(decoding: tier.bytes.prefix(4096), as: UTF8.self)
                #expect(!text.contains("Exif") && !text.contains("ICC_PROFILE") && !text.contains("http://ns.adobe.com"), "\(name)")
            }
        }
        HostileLedger.record("images", "metadata in outputs", tried: "EXIF with orientation, embedded ICC profile (CMYK), PNG with alpha, animated GIF", count: 4, outcome: "no EXIF, GPS, XMP, ICC or comment in any output; orientation applied, CMYK converted, alpha on white, first frame only")
    }
}

/// A real small JPEG whose SOF header is rewritten to declare a huge size.
enum JPEGBomb {
    static func make(width: Int, height: Int, from jpeg: [UInt8]) -> [UInt8] {
        var bytes = jpeg
        var index = 2
        while index + 9 < bytes.count, bytes[index] == 0xFF {
            let marker = bytes[index + 1]
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            if (0xC0...0xC2).contains(marker) {
                bytes[index + 5] = UInt8(height >> 8); bytes[index + 6] = UInt8(height & 0xFF)
                bytes[index + 7] = UInt8(width >> 8); bytes[index + 8] = UInt8(width & 0xFF)
                return bytes
            }
            index += 2 + length
        }
        return bytes
    }
}

/// A GIF whose logical screen and image descriptor declare a huge size.
enum GIFBomb {
    static func make(width: UInt16, height: UInt16) -> [UInt8] {
        func le(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
        var gif = Array("GIF89a".utf8) + le(width) + le(height) + [0x80, 0, 0] + [0, 0, 0, 255, 255, 255]
        gif += [0x2C] + le(0) + le(0) + le(width) + le(height) + [0]
        gif += [2, 2, 0x4C, 0x01, 0, 0x3B]
        return gif
    }
}
