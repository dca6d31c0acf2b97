/// SHA-256 (FIPS 180-4) and MD5 (RFC 1321) in plain Swift, for the bottom layers that the
/// lookup library links: an inline photo's key, a shard's hash, a long text's short
/// hash, a user's palette colour. With them the lookup builds without swift-crypto and
/// the BoringSSL it compiles (docs/embedding.md, "Building"). The cache's files are
/// hashed by swift-crypto above these layers (`SHA256Hex`, in AvatarCacheStore);
/// `DigestTests` holds both to swift-crypto's answers.
package enum Digests {
    /// SHA-256 of `bytes`: 32 bytes.
    package static func sha256(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var state: [UInt32] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]
        var w = [UInt32](repeating: 0, count: 64)
        forEachBlock(of: bytes, bigEndianLength: true) { block in
            for i in 0..<16 {
                w[i] = UInt32(block[i * 4]) << 24 | UInt32(block[i * 4 + 1]) << 16 | UInt32(block[i * 4 + 2]) << 8 | UInt32(block[i * 4 + 3])
            }
            for i in 16..<64 {
                let s0 = w[i - 15].rotatedRight(7) ^ w[i - 15].rotatedRight(18) ^ (w[i - 15] >> 3)
                let s1 = w[i - 2].rotatedRight(17) ^ w[i - 2].rotatedRight(19) ^ (w[i - 2] >> 10)
                w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
            }
            var a = state[0], b = state[1], c = state[2], d = state[3]
            var e = state[4], f = state[5], g = state[6], h = state[7]
            for i in 0..<64 {
                let s1 = e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)
                let choice = (e & f) ^ (~e & g)
                let t1 = h &+ s1 &+ choice &+ sha256Constants[i] &+ w[i]
                let s0 = a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)
                let majority = (a & b) ^ (a & c) ^ (b & c)
                let t2 = s0 &+ majority
                h = g; g = f; f = e; e = d &+ t1
                d = c; c = b; b = a; a = t1 &+ t2
            }
            state[0] &+= a; state[1] &+= b; state[2] &+= c; state[3] &+= d
            state[4] &+= e; state[5] &+= f; state[6] &+= g; state[7] &+= h
        }
        return state.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (24 - 8 * $0)) } }
    }

    /// MD5 of `bytes`: 16 bytes. Only for the palette colour, which Jami picks by MD5.
    /// Every profile's palette colour is an MD5 of its id (a million a run), so the bytes
    /// are hashed where they lie, block by block, without a copy or a generic step a byte.
    package static func md5(_ bytes: some Collection<UInt8>) -> [UInt8] {
        if let digest = bytes.withContiguousStorageIfAvailable({ md5(contiguous: UnsafeRawBufferPointer($0)) }) { return digest }
        return Array(bytes).withUnsafeBytes { md5(contiguous: $0) }
    }

    private static func md5(contiguous bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var state: (UInt32, UInt32, UInt32, UInt32) = (0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476)
        let whole = bytes.count / 64 * 64
        var offset = 0
        while offset < whole {
            md5Block(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + 64]), &state)
            offset += 64
        }
        // The rest, a 1 bit, zeros and the length in bits (little-endian): one or two blocks.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 128) { tail in
            let rest = bytes.count - whole
            for i in 0..<rest { tail[i] = bytes[whole + i] }
            tail[rest] = 0x80
            let blocks = rest + 9 <= 64 ? 1 : 2
            for i in (rest + 1)..<(blocks * 64 - 8) { tail[i] = 0 }
            let bits = UInt64(bytes.count) &* 8
            for i in 0..<8 { tail[blocks * 64 - 8 + i] = UInt8(truncatingIfNeeded: bits >> (8 * i)) }
            for block in 0..<blocks { md5Block(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(tail)[(block * 64)..<(block * 64 + 64)]), &state) }
        }
        return [state.0, state.1, state.2, state.3].flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (8 * $0)) } }
    }

    /// One 64-byte block into the state (RFC 1321's rounds).
    private static func md5Block(_ block: UnsafeRawBufferPointer, _ state: inout (UInt32, UInt32, UInt32, UInt32)) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 16) { m in
            for i in 0..<16 {
                m[i] = UInt32(block[i * 4]) | UInt32(block[i * 4 + 1]) << 8 | UInt32(block[i * 4 + 2]) << 16 | UInt32(block[i * 4 + 3]) << 24
            }
            var a = state.0, b = state.1, c = state.2, d = state.3
            for i in 0..<64 {
                var f: UInt32
                let g: Int
                switch i {
                case 0..<16: f = (b & c) | (~b & d); g = i
                case 16..<32: f = (d & b) | (~d & c); g = (5 * i + 1) % 16
                case 32..<48: f = b ^ c ^ d; g = (3 * i + 5) % 16
                default: f = c ^ (b | ~d); g = (7 * i) % 16
                }
                f = f &+ a &+ md5Constants[i] &+ m[g]
                a = d; d = c; c = b
                b = b &+ f.rotatedLeft(md5Shifts[i])
            }
            state.0 &+= a; state.1 &+= b; state.2 &+= c; state.3 &+= d
        }
    }

    /// Lowercase hexadecimal of SHA-256.
    package static func sha256Hex(_ bytes: some Collection<UInt8>) -> String { hex(sha256(bytes)) }

    package static func hex(_ bytes: some Sequence<UInt8>) -> String {
        var text = ""
        text.reserveCapacity(64)
        for byte in bytes {
            text.append(Character(Unicode.Scalar(UInt8(ascii: "0") &+ (byte >> 4) &+ (byte >> 4 > 9 ? 39 : 0))))
            text.append(Character(Unicode.Scalar(UInt8(ascii: "0") &+ (byte & 15) &+ (byte & 15 > 9 ? 39 : 0))))
        }
        return text
    }

    /// Calls `body` with each 64-byte block of `bytes` padded as both digests pad: a 1 bit,
    /// zeros, and the length in bits in the last 8 bytes (big- or little-endian).
    private static func forEachBlock(of bytes: some Collection<UInt8>, bigEndianLength: Bool, _ body: ([UInt8]) -> Void) {
        var block = [UInt8]()
        block.reserveCapacity(64)
        for byte in bytes {
            block.append(byte)
            if block.count == 64 {
                body(block)
                block.removeAll(keepingCapacity: true)
            }
        }
        let bits = UInt64(bytes.count) &* 8
        block.append(0x80)
        if block.count > 56 {
            block.append(contentsOf: repeatElement(0, count: 64 - block.count))
            body(block)
            block.removeAll(keepingCapacity: true)
        }
        block.append(contentsOf: repeatElement(0, count: 56 - block.count))
        for i in 0..<8 {
            block.append(UInt8(truncatingIfNeeded: bigEndianLength ? bits >> (56 - 8 * i) : bits >> (8 * i)))
        }
        body(block)
    }

    private static let sha256Constants: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    /// floor(abs(sin(i + 1)) × 2^32), RFC 1321's table.
    private static let md5Constants: [UInt32] = [
        0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
        0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
        0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
        0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
        0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
        0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
        0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
        0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
    ]

    private static let md5Shifts: [UInt32] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
        5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
        4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
        6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ]
}

extension UInt32 {
    fileprivate func rotatedRight(_ count: UInt32) -> UInt32 { self >> count | self << (32 - count) }
    fileprivate func rotatedLeft(_ count: UInt32) -> UInt32 { self << count | self >> (32 - count) }
}
