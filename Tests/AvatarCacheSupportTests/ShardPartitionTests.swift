import Crypto
import Foundation
import Testing
@testable import AvatarCacheModel
@testable import AvatarCacheSupport

/// `--shard i/n`: the partition is a hash of the source key, computed here apart from ours
/// (merging the shards' caches: the end-to-end ShardAndMergeTests).
@Suite struct ShardPartitionTests {
    /// A profile as the shard sees it: its id and its photo (the rest is the monograms').
    func profile(_ id: String, photo: PhotoSource? = nil) -> Profile {
        Profile(id: id, displayName: "X", decidedInitials: "X", glyph: nil, photo: photo, validatedColorHex: nil)
    }

    @Test func thePartitionIsAHashOfTheSourceKeyNotTheExportOrder() throws {
        // The documented rule, computed independently: SHA-256, first 8 bytes big-endian, mod n.
        for key in ["https://avatars.example.com/photos/astronaut.jpg", "sha256:00ff", "u1000", "é"] {
            let digest = Array(SHA256.hash(data: Array(key.utf8)))
            let prefix = digest[..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            for count in [1, 2, 3, 7, 1000] { #expect(Shard.of(key: key, count: count) == Int(prefix % UInt64(count))) }
        }
        // A profile goes with its photo's source; one without a photo with its id.
        let url = "https://example.com/shared.jpg"
        let a = profile("a", photo: .url(url, sendMonicaToken: false))
        let b = profile("b", photo: .url(url, sendMonicaToken: false))
        let shards = try (0..<7).map { try Shard(index: $0, count: 7) }
        #expect(shards.filter { $0.owns(a) } == shards.filter { $0.owns(b) })
        #expect(shards.filter { $0.owns(a) }.count == 1)
        let ids = (0..<2000).map { profile("user-\($0)") }
        let counts = shards.map { shard in ids.filter(shard.owns).count }
        #expect(counts.reduce(0, +) == ids.count, "each profile in exactly one shard")
        #expect(counts.allSatisfy { (200...380).contains($0) }, "spread evenly: \(counts)")
        // Parsing: i/n from 0, with reasons.
        #expect(try Shard(parsing: "2/3") == Shard(index: 2, count: 3))
        for bad in ["3/3", "-1/2", "1/0", "a/b", "1", "1/2/3", ""] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try Shard(parsing: bad) }
        }
    }
}
