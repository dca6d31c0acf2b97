import Foundation
import AvatarCacheConfiguration
import AvatarCacheStore
import AvatarCacheTestKit

/// What the end-to-end tests share beyond the test kit: a run's configuration and what a
/// run left in the cache.
extension Fixtures {
    /// A configuration for tests: loopback allowed, short timeout.
    package static func configuration(exports: [String], cache: URL) -> WarmConfiguration {
        var configuration = WarmConfiguration(exports: exports, cacheDirectory: cache)
        configuration.allowPrivateNetworks = true
        configuration.fetchLimits.timeout = 5
        configuration.concurrency = 4
        return configuration
    }

    /// The whole index of a cache, each profile pointed at what it shows.
    package static func loadMetadata(_ cache: URL) throws -> CacheMetadata {
        try CacheStore.snapshot(CacheDirectory(root: cache))
    }

    /// The cache's metadata.json, the apps' document.
    package static func loadDocument(_ cache: URL) throws -> MetadataDocument {
        try MetadataDocument.read(CacheDirectory(root: cache))
    }
}
