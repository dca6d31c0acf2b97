import AvatarCacheModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// ThumbHash (https://evanw.github.io/thumbhash/): a picture in about 25 bytes, its
/// aspect ratio and alpha kept, that an app decodes to a blurred placeholder. The
/// decoder, written from the published algorithm (the encoder is the writers', in
/// AvatarCacheImaging); `PlaceholderTests` holds both to the reference implementation's
/// output (hashes and decoded pixels) on the same pixels.
public enum ThumbHash {
    public struct Image: Sendable, Equatable {
        public var width: Int
        public var height: Int
        /// width × height × 4 bytes.
        public var rgba: [UInt8]
    }

    /// The placeholder picture of a `placeholder.thumbHash` as a lookup or metadata.json
    /// gives it (base64), at most 32 px on its longer side, as the reference decoder draws it.
    ///
    /// ```swift
    /// if let hash = answer.placeholder?.thumbHash {
    ///     let picture = try ThumbHash.decode(base64: hash)
    ///     // picture.width × picture.height RGBA pixels, to scale up and draw
    /// }
    /// ```
    /// - Throws: ``LookupError/invalidArgument(_:)`` for text that is not base64 of a hash.
    public static func decode(base64: String) throws -> Image {
        guard let bytes = Data(base64Encoded: base64), let picture = decode([UInt8](bytes)) else {
            throw LookupError.invalidArgument("not a ThumbHash in base64: \(base64.prefix(64))")
        }
        return Image(width: picture.width, height: picture.height, rgba: picture.rgba)
    }

    /// The placeholder picture of a hash (straight RGBA, row by row, at most 32 px on its
    /// longer side), as the reference decoder draws it. nil for a hash too short to hold
    /// its header.
    public static func decode(_ hash: [UInt8]) -> (width: Int, height: Int, rgba: [UInt8])? {
        guard hash.count >= 5 else { return nil }
        let header24 = Int(hash[0]) | (Int(hash[1]) << 8) | (Int(hash[2]) << 16)
        let header16 = Int(hash[3]) | (Int(hash[4]) << 8)
        let lDC = Double(header24 & 63) / 63
        let pDC = Double((header24 >> 6) & 63) / 31.5 - 1
        let qDC = Double((header24 >> 12) & 63) / 31.5 - 1
        let lScale = Double((header24 >> 18) & 31) / 31
        let hasAlpha = (header24 >> 23) != 0
        let pScale = Double((header16 >> 3) & 63) / 63
        let qScale = Double((header16 >> 9) & 63) / 63
        let isLandscape = (header16 >> 15) != 0
        let lx = max(3, isLandscape ? (hasAlpha ? 5 : 7) : header16 & 7)
        let ly = max(3, isLandscape ? header16 & 7 : (hasAlpha ? 5 : 7))
        let aDC = hasAlpha && hash.count > 5 ? Double(hash[5] & 15) / 15 : 1
        let aScale = hasAlpha && hash.count > 5 ? Double(hash[5] >> 4) / 15 : 0

        let start = hasAlpha ? 6 : 5
        var index = 0
        func factors(_ nx: Int, _ ny: Int, _ scale: Double) -> [Double] {
            var ac: [Double] = []
            for cy in 0..<ny {
                var cx = cy > 0 ? 0 : 1
                while cx * ny < nx * (ny - cy) {
                    let slot = start + (index >> 1)
                    let nibble = slot < hash.count ? (Int(hash[slot]) >> ((index & 1) << 2)) & 15 : 0
                    ac.append((Double(nibble) / 7.5 - 1) * scale)
                    index += 1
                    cx += 1
                }
            }
            return ac
        }
        let lAC = factors(lx, ly, lScale)
        let pAC = factors(3, 3, pScale * 1.25)
        let qAC = factors(3, 3, qScale * 1.25)
        let aAC = hasAlpha ? factors(5, 5, aScale) : []

        let ratio = approximateAspectRatio(hash)
        let w = Int(round(ratio > 1 ? 32 : 32 * ratio))
        let h = Int(round(ratio > 1 ? 32 / ratio : 32))
        var rgba = [UInt8](repeating: 0, count: w * h * 4)
        let cxStop = max(lx, hasAlpha ? 5 : 3)
        let cyStop = max(ly, hasAlpha ? 5 : 3)
        var fx = [Double](repeating: 0, count: cxStop), fy = [Double](repeating: 0, count: cyStop)
        for y in 0..<h {
            for x in 0..<w {
                var l = lDC, p = pDC, q = qDC, a = aDC
                for cx in 0..<cxStop { fx[cx] = cos(Double.pi / Double(w) * (Double(x) + 0.5) * Double(cx)) }
                for cy in 0..<cyStop { fy[cy] = cos(Double.pi / Double(h) * (Double(y) + 0.5) * Double(cy)) }
                func sum(_ ac: [Double], _ nx: Int, _ ny: Int) -> Double {
                    var total = 0.0, j = 0
                    for cy in 0..<ny {
                        var cx = cy > 0 ? 0 : 1
                        let fy2 = fy[cy] * 2
                        while cx * ny < nx * (ny - cy) {
                            total += ac[j] * fx[cx] * fy2
                            j += 1
                            cx += 1
                        }
                    }
                    return total
                }
                l += sum(lAC, lx, ly)
                var j = 0
                for cy in 0..<3 {
                    var cx = cy > 0 ? 0 : 1
                    let fy2 = fy[cy] * 2
                    while cx < 3 - cy {
                        let f = fx[cx] * fy2
                        p += pAC[j] * f
                        q += qAC[j] * f
                        j += 1
                        cx += 1
                    }
                }
                if hasAlpha { a += sum(aAC, 5, 5) }
                let b = l - 2.0 / 3 * p
                let r = (3 * l - b + q) / 2
                let g = r - q
                let i = (x + y * w) * 4
                rgba[i] = UInt8(max(0, 255 * min(1, r)))
                rgba[i + 1] = UInt8(max(0, 255 * min(1, g)))
                rgba[i + 2] = UInt8(max(0, 255 * min(1, b)))
                rgba[i + 3] = UInt8(max(0, 255 * min(1, a)))
            }
        }
        return (w, h, rgba)
    }

    /// Width over height of the hashed picture, roughly (from its coefficient counts).
    public static func approximateAspectRatio(_ hash: [UInt8]) -> Double {
        guard hash.count >= 5 else { return 1 }
        let header = hash[3]
        let hasAlpha = (hash[2] & 0x80) != 0
        let isLandscape = (hash[4] & 0x80) != 0
        let lx = isLandscape ? (hasAlpha ? 5 : 7) : Int(header & 7)
        let ly = isLandscape ? Int(header & 7) : (hasAlpha ? 5 : 7)
        return Double(lx) / Double(ly)
    }
}
