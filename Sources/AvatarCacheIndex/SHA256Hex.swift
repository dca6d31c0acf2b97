import Crypto

/// Lowercase hex SHA-256: names cache files and keys inline photos.
package enum SHA256Hex {
    package static func of(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).hexString
    }
}

extension Sequence where Element == UInt8 {
    /// Lowercase hexadecimal.
    var hexString: String {
        var text = ""
        text.reserveCapacity(64)
        for byte in self {
            text.append(Character(Unicode.Scalar(UInt8(ascii: "0") &+ (byte >> 4) &+ (byte >> 4 > 9 ? 39 : 0))))
            text.append(Character(Unicode.Scalar(UInt8(ascii: "0") &+ (byte & 15) &+ (byte & 15 > 9 ? 39 : 0))))
        }
        return text
    }
}

extension Digest {
    package var hexString: String { Array(self).hexString }
}
