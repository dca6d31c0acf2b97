import Foundation
import Testing
@testable import AvatarCacheImaging
@testable import AvatarCacheModel
@testable import AvatarCacheSupport
import AvatarCacheImagingTestSupport
import AvatarCacheTestKit

/// Seeded fuzz of the inline image formats: TIFF (libtiff, reached only for photos an
/// export carries) and BMP (our decoder). Every mutant either decodes or is refused with a
/// reason; none crashes or hangs (each is timed). (Firestore, the Auth CSV and vCard
/// photos: AvatarCacheExportsTests' HostileExportFormatsTests.)
@Suite struct HostileNewFormatsTests {
    /// Renders `count` mutants as inline photos: how many decoded, how many were refused
    /// (an `ImagingError`; anything else fails the test), and the slowest, in seconds.
    func renderMutants(_ count: Int, _ renderer: AvatarRenderer, _ mutant: (Int) -> [UInt8]) throws -> (decoded: Int, refused: Int, slowest: Double) {
        var decoded = 0, refused = 0, slowest = 0.0
        for iteration in 0..<count {
            let bytes = mutant(iteration)
            let started = Date()
            do {
                _ = try renderer.render(bytes, inline: true)
                decoded += 1
            } catch is ImagingError {
                refused += 1
            }
            slowest = max(slowest, Date().timeIntervalSince(started))
        }
        return (decoded, refused, slowest)
    }

    @Test func seededFuzzOfInlineTIFF() throws {
        var random = SeededRandom(seed: 37)
        let renderer = AvatarRenderer(tiers: [330, 110], maxPixels: 50_000_000)
        let original = SampleImages.addressBookTIFF(width: 96, height: 64)
        let iterations = 300
        let (decoded, refused, slowest) = try renderMutants(iterations, renderer) { iteration in
            var bytes = original
            switch iteration % 4 {
            case 0: for _ in 0..<(1 + random.below(8)) { bytes[random.below(bytes.count)] ^= random.byte() }   // bit flips anywhere
            case 1: bytes = Array(bytes.prefix(random.below(bytes.count)))                                      // cut short
            case 2:                                                                                                 // an IFD entry's value replaced
                let entry = 10 + 12 * random.below(10) + 8
                for k in 0..<4 { bytes[entry + k] = random.byte() }
            default:                                                                                                // the header's IFD offset
                for k in 4..<8 { bytes[k] = random.byte() }
            }
            return bytes
        }
        #expect(decoded + refused == iterations)
        #expect(slowest < 5, "slowest mutant \(slowest) s")
        HostileLedger.record("images", "inline TIFF fuzz", tried: "\(iterations) mutants of an Address Book-style TIFF (bit flips, cuts, IFD values, IFD offset), seed 37, rendered as inline photos",
                             count: iterations, outcome: "no crash, no hang (slowest \(String(format: "%.2f", slowest)) s): \(decoded) decoded, \(refused) refused (invalidImage, tooManyPixels, unsupportedFormat)")
    }

    /// Inline BMP (our own decoder): every form Windows writes, mutated.
    @Test func seededFuzzOfInlineBMP() throws {
        var random = SeededRandom(seed: 50)
        let renderer = AvatarRenderer(tiers: [330, 110], maxPixels: 50_000_000)
        let originals = InlineBMPTests.Form.allCases.map { InlineBMPTests.bitmap($0, width: 48, height: 40) }
        let iterations = 440
        let (decoded, refused, slowest) = try renderMutants(iterations, renderer) { iteration in
            var bytes = originals[iteration % originals.count]
            switch iteration / originals.count % 4 {
            case 0: for _ in 0..<(1 + random.below(8)) { bytes[random.below(bytes.count)] ^= random.byte() }   // bit flips anywhere
            case 1: bytes = Array(bytes.prefix(random.below(bytes.count)))                                      // cut short
            case 2: for _ in 0..<4 { bytes[14 + random.below(min(40, bytes.count - 14))] = random.byte() }     // the header's fields
            default: for k in 0..<(bytes.count - 60) / 2 { bytes[60 + random.below(bytes.count - 60)] = UInt8(truncatingIfNeeded: k) }  // pixels, RLE codes
            }
            return bytes
        }
        #expect(decoded + refused == iterations)
        #expect(slowest < 5, "slowest mutant \(slowest) s")
        HostileLedger.record("images", "inline BMP fuzz", tried: "\(iterations) mutants of bitmaps in 11 forms (24/32-bit, bit fields, V5 alpha, 1/4/8-bit palettes, RLE8, RLE4, OS/2): bit flips, cuts, header fields, pixel and RLE bytes; seed 50; rendered as inline photos",
                             count: iterations, outcome: "no crash, no hang (slowest \(String(format: "%.2f", slowest)) s): \(decoded) decoded, \(refused) refused (invalidImage, tooManyPixels, unsupportedFormat)")
    }
}
