import AvatarCacheModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One part of a run split across machines (`--shard i/n`): shard `index` of `count`,
/// numbered from 0 as Slurm array tasks and Kubernetes completion indexes are.
///
/// The partition is by source key, the same on every machine and every run: the first
/// eight bytes of SHA-256 of the key's UTF-8, read as a big-endian integer, modulo
/// `count`. A profile goes with its photo's source key (the URL, or `sha256:<hex>` of
/// an inline photo), so one source is fetched and decoded by one shard only; a profile
/// without a photo goes with its user id. The order of the export plays no part.
public struct Shard: Sendable, Hashable, CustomStringConvertible {
    public let index: Int
    public let count: Int

    /// At most this many shards: far more than any cluster warming one cache needs.
    public static let maxCount = 100_000

    public init(index: Int, count: Int) throws {
        guard (1...Self.maxCount).contains(count) else {
            throw ConfigurationError(message: "--shard \(index)/\(count): the count must be between 1 and \(Self.maxCount)")
        }
        guard (0..<count).contains(index) else {
            throw ConfigurationError(message: "--shard \(index)/\(count): the index must be between 0 and \(count - 1) (shards are numbered from 0)")
        }
        self.index = index
        self.count = count
    }

    /// Parses `i/n` (`2/3`: the third of three).
    public init(parsing text: String) throws {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0].trimmingSpaces),
              let count = Int(parts[1].trimmingSpaces) else {
            throw ConfigurationError(message: "--shard takes i/n (the i-th of n shards, from 0: 0/3, 1/3, 2/3), not \"\(text)\"")
        }
        try self.init(index: index, count: count)
    }

    public var description: String { "\(index)/\(count)" }

    /// The shard, of `count`, that a source key (or user id) belongs to.
    public static func of(key: String, count: Int) -> Int {
        let digest = Digests.sha256(key.utf8)
        var prefix: UInt64 = 0
        for byte in digest.prefix(8) { prefix = prefix << 8 | UInt64(byte) }
        return Int(prefix % UInt64(count))
    }

    /// Whether this shard takes a profile: by its photo's source key, else by its id.
    public func owns(_ profile: Profile) -> Bool {
        count == 1 || Self.of(key: profile.photo?.key ?? profile.id, count: count) == index
    }
}
