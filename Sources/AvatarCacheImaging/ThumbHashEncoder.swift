import Foundation

/// The ThumbHash encoder (https://evanw.github.io/thumbhash/): a picture in about 25
/// bytes, its aspect ratio and alpha kept. Written from the published algorithm; the
/// decoder an app uses is AvatarCacheLookup's `ThumbHash`, and `PlaceholderTests` holds
/// both to the reference implementation's output on the same pixels.
public enum ThumbHashEncoder {
    /// The hash of a `width` × `height` straight (not premultiplied) RGBA picture, row by
    /// row; both sides at most 100 (the reference refuses more: a larger input only costs
    /// time). nil for an empty or oversized picture.
    public static func encode(width w: Int, height h: Int, rgba: [UInt8]) -> [UInt8]? {
        guard w > 0, h > 0, w <= 100, h <= 100, rgba.count >= w * h * 4 else { return nil }
        let count = w * h
        // The reference's alpha / 255 and alpha / 255 / 255 for each byte: the same
        // divisions, made once (`unit`, `scaled`).
        let unit = Self.unit, scaled = Self.scaled
        // The average colour, alpha-weighted.
        var avgR = 0.0, avgG = 0.0, avgB = 0.0, avgA = 0.0
        for i in 0..<count {
            let alpha = unit[Int(rgba[i * 4 + 3])], weight = scaled[Int(rgba[i * 4 + 3])]
            avgR += weight * Double(rgba[i * 4])
            avgG += weight * Double(rgba[i * 4 + 1])
            avgB += weight * Double(rgba[i * 4 + 2])
            avgA += alpha
        }
        if avgA > 0 {
            avgR /= avgA
            avgG /= avgA
            avgB /= avgA
        }
        let hasAlpha = avgA < Double(count)
        let limit = hasAlpha ? 5.0 : 7.0
        let longest = Double(max(w, h))
        let lx = max(1, Int(round(limit * Double(w) / longest)))
        let ly = max(1, Int(round(limit * Double(h) / longest)))

        // LPQA, each pixel composited atop the average colour.
        var l = [Double](repeating: 0, count: count), p = l, q = l, a = l
        for i in 0..<count {
            let alpha = unit[Int(rgba[i * 4 + 3])], weight = scaled[Int(rgba[i * 4 + 3])]
            let r = avgR * (1 - alpha) + weight * Double(rgba[i * 4])
            let g = avgG * (1 - alpha) + weight * Double(rgba[i * 4 + 1])
            let b = avgB * (1 - alpha) + weight * Double(rgba[i * 4 + 2])
            l[i] = (r + g + b) / 3
            p[i] = (r + g) / 2 - b
            q[i] = r - g
            a[i] = alpha
        }

        // The cosines every term needs, each computed once (the same expressions as the
        // reference's, so the same values): cosY[k][y] = cos(π / h · k · (y + ½)), and
        // cosX[x] lane k = cos(π / w · k · (x + ½)).
        let cosY = (h == Cosines.common.side ? Cosines.common : Cosines(side: h)).byTerm
        let cosX = (w == Cosines.common.side ? Cosines.common : Cosines(side: w)).byPosition

        // DCT: the constant term, and the varying ones scaled to 0…1.
        func channel(_ values: [Double], _ nx: Int, _ ny: Int) -> (dc: Double, ac: [Double], scale: Double) {
            var dc = 0.0, ac: [Double] = [], scale = 0.0
            for cy in 0..<ny {
                var terms = 0
                while terms * ny < nx * (ny - cy) { terms += 1 }
                // A row's terms summed side by side, one lane each: every lane adds the
                // reference's products in the reference's order (value × cos x × cos y,
                // row by row), so each sum is rounded as the reference rounds it; the
                // lanes only keep the sums from waiting on one another.
                var sums = SIMD8<Double>()
                values.withUnsafeBufferPointer { values in
                    cosX.withUnsafeBufferPointer { fx in
                        for y in 0..<h {
                            let fy = cosY[cy][y]
                            for x in 0..<w { sums += SIMD8(repeating: values[x + y * w]) * fx[x] * fy }
                        }
                    }
                }
                for cx in 0..<terms {
                    let f = sums[cx] / Double(count)
                    if cx > 0 || cy > 0 {
                        ac.append(f)
                        scale = max(scale, abs(f))
                    } else {
                        dc = f
                    }
                }
            }
            if scale > 0 {
                for i in ac.indices { ac[i] = 0.5 + 0.5 / scale * ac[i] }
            }
            return (dc, ac, scale)
        }
        let lum = channel(l, max(3, lx), max(3, ly))
        let yellowBlue = channel(p, 3, 3)
        let redGreen = channel(q, 3, 3)
        let opacity = hasAlpha ? channel(a, 5, 5) : nil

        // The constants, then the varying factors four bits each.
        let isLandscape = w > h
        let header24 = Int(round(63 * lum.dc)) | (Int(round(31.5 + 31.5 * yellowBlue.dc)) << 6)
            | (Int(round(31.5 + 31.5 * redGreen.dc)) << 12) | (Int(round(31 * lum.scale)) << 18) | ((hasAlpha ? 1 : 0) << 23)
        let header16 = (isLandscape ? ly : lx) | (Int(round(63 * yellowBlue.scale)) << 3)
            | (Int(round(63 * redGreen.scale)) << 9) | ((isLandscape ? 1 : 0) << 15)
        var hash: [UInt8] = [UInt8(header24 & 255), UInt8((header24 >> 8) & 255), UInt8((header24 >> 16) & 255),
                             UInt8(header16 & 255), UInt8((header16 >> 8) & 255)]
        if let opacity { hash.append(UInt8(Int(round(15 * opacity.dc)) | (Int(round(15 * opacity.scale)) << 4))) }
        var index = 0
        let start = hash.count
        for factors in [lum.ac, yellowBlue.ac, redGreen.ac] + (opacity.map { [$0.ac] } ?? []) {
            for f in factors {
                let slot = start + (index >> 1)
                if slot == hash.count { hash.append(0) }
                hash[slot] |= UInt8(Int(round(15 * f)) << ((index & 1) << 2))
                index += 1
            }
        }
        return hash
    }

    /// The cosines of one side's terms, both ways round.
    private struct Cosines {
        let side: Int
        /// [k][x]
        let byTerm: [[Double]]
        /// [x], lane k
        let byPosition: [SIMD8<Double>]

        init(side: Int) {
            let terms = 7   // the most any channel has: luminance without alpha
            self.side = side
            byTerm = (0..<terms).map { k in (0..<side).map { cos(Double.pi / Double(side) * Double(k) * (Double($0) + 0.5)) } }
            byPosition = (0..<side).map { x in
                var lanes = SIMD8<Double>()
                for k in 0..<terms { lanes[k] = cos(Double.pi / Double(side) * Double(k) * (Double(x) + 0.5)) }
                return lanes
            }
        }

        /// The placeholders' own side (the writer's pictures are 32 × 32 at most), made once.
        static let common = Cosines(side: 32)
    }

    /// Byte / 255, and that / 255, as the reference computes them for each pixel.
    private static let unit: [Double] = (0...255).map { Double($0) / 255 }
    private static let scaled: [Double] = unit.map { $0 / 255 }

    /// A placeholder picture: straight (not premultiplied) RGBA, row by row.
}
