import AvatarCacheModel
import Crypto

/// Lowercase hex SHA-256 of a file's bytes, through swift-crypto (BoringSSL's SHA-256:
/// every tier file a run writes, and `verify`'s check). The layers below hash only short
/// keys, with their own `Digests`.
package enum SHA256Hex {
    package static func of(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).hexString
    }
}

extension Digest {
    package var hexString: String { Digests.hex(Array(self)) }
}
