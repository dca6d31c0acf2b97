import Foundation
import Testing
@testable import AvatarCacheImaging
@testable import AvatarCacheLookup
import AvatarCacheTestKit

/// ThumbHash held to its reference implementation (Tests/Fixtures/thumbhash): our encoder
/// (the imaging module) and our decoder (the lookup library, which draws the placeholder).
@Suite struct ThumbHashReferenceTests {
    static func reference() throws -> ThumbHashReference { try ThumbHashReference.load() }

    /// The reference's bytes, but for what no two maths libraries agree on: where a
    /// coefficient is zero in exact arithmetic (a symmetric picture), its last bit of cos
    /// (V8's against glibc's) decides a 7.5 tie, one step either way; and a channel with
    /// nothing to encode (a flat colour: its scale rounds to 0, so no decoder draws its
    /// terms) carries that noise, scaled up, in its four-bit terms.
    @Test func thumbHashGivesTheReferencesBytesForTheSamePixels() throws {
        let reference = try Self.reference()
        #expect(reference.pictures.count == 7)
        var identical = 0
        for picture in reference.pictures {
            let rgba = [UInt8](Data(base64Encoded: picture.rgba)!)
            let hash = try #require(ThumbHashEncoder.encode(width: picture.width, height: picture.height, rgba: rgba), "\(picture.name)")
            let expected = [UInt8](Data(base64Encoded: picture.hash)!)
            if hash == expected { identical += 1 }
            #expect(hash.count == expected.count, "\(picture.name)")
            let hasAlpha = expected[2] & 0x80 != 0
            let headerBytes = hasAlpha ? 6 : 5
            #expect(hash.prefix(headerBytes) == expected.prefix(headerBytes), "\(picture.name): header")
            // Which channel each four-bit term belongs to, and whether it is drawn.
            let header16 = Int(expected[3]) | (Int(expected[4]) << 8)
            let isLandscape = header16 >> 15 != 0
            let lx = max(3, isLandscape ? (hasAlpha ? 5 : 7) : header16 & 7)
            let ly = max(3, isLandscape ? header16 & 7 : (hasAlpha ? 5 : 7))
            func terms(_ nx: Int, _ ny: Int) -> Int { (0..<ny).reduce(0) { total, cy in total + (0..<nx).filter { $0 * ny < nx * (ny - cy) }.count } - 1 }
            let header24 = Int(expected[0]) | (Int(expected[1]) << 8) | (Int(expected[2]) << 16)
            var channels = [(terms(lx, ly), (header24 >> 18) & 31), (terms(3, 3), (header16 >> 3) & 63), (terms(3, 3), (header16 >> 9) & 63)]
            if hasAlpha { channels.append((terms(5, 5), Int(expected[5] >> 4))) }
            var index = 0
            for (count, scale) in channels {
                for _ in 0..<count {
                    let byte = headerBytes + index >> 1, shift = (index & 1) * 4
                    let mine = (Int(hash[byte]) >> shift) & 15, theirs = (Int(expected[byte]) >> shift) & 15
                    #expect(scale == 0 || abs(mine - theirs) <= 1, "\(picture.name): term \(index) is \(mine), the reference's \(theirs)")
                    index += 1
                }
            }
            // Drawn, the two hashes give the same picture but for a tie's step (a term off
            // by 1/15 of its channel's range: 9 levels at most on these pictures).
            let mineDrawn = try #require(ThumbHash.decode(hash)), theirsDrawn = try #require(ThumbHash.decode(expected))
            let differences = zip(mineDrawn.rgba, theirsDrawn.rgba).map { abs(Int($0) - Int($1)) }
            #expect((differences.max() ?? 0) <= 10, "\(picture.name): decoded pictures differ by up to \(differences.max() ?? 0) levels")
            let mean = Double(differences.reduce(0, +)) / Double(max(1, differences.count))
            #expect(mean <= 3, "\(picture.name): decoded pictures differ by \(mean) levels on average")
        }
        #expect(identical >= 4, "\(identical) of 7 hashes byte for byte the reference's")
        #expect(ThumbHashEncoder.encode(width: 101, height: 10, rgba: [UInt8](repeating: 0, count: 4040)) == nil)
    }

    @Test func thumbHashDecodesToTheReferencesPixels() throws {
        for picture in try Self.reference().pictures {
            let decoded = try #require(ThumbHash.decode([UInt8](Data(base64Encoded: picture.hash)!)))
            #expect(decoded.width == picture.decoded.width && decoded.height == picture.decoded.height, "\(picture.name)")
            #expect(Data(decoded.rgba).base64EncodedString() == picture.decoded.rgba, "\(picture.name)")
        }
    }
}
