import Crypto
import Foundation
import Testing
@testable import AvatarCacheModel

/// The bottom layers' own SHA-256 and MD5 (which keep swift-crypto out of the lookup
/// library) give swift-crypto's digests: every length around the padding's edges, random
/// bytes, and a megabyte.
struct DigestTests {
    @Test func sha256AndMD5AreSwiftCryptos() {
        var generator = SystemRandomNumberGenerator()
        var lengths = Array(0...200)
        lengths += [447, 448, 511, 512, 513, 1000, 4096, 65_537, 1 << 20]
        for length in lengths {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(Digests.sha256(bytes) == Array(SHA256.hash(data: bytes)), "SHA-256 of \(length) bytes")
            #expect(Digests.md5(bytes) == Array(Insecure.MD5.hash(data: bytes)), "MD5 of \(length) bytes")
        }
        #expect(Digests.sha256Hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Digests.hex(Digests.md5(Array("abc".utf8))) == "900150983cd24fb0d6963f7d28e17f72")
    }
}
