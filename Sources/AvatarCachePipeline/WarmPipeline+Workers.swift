import AvatarCacheConfiguration
import AvatarCacheFetching
import AvatarCacheImaging
import AvatarCacheModel
import AvatarCacheStore
import AvatarCacheSupport
import Foundation
import Logging

extension WarmPipeline {
    /// What the job stages share: one HTTP client, one decode pool, one file pool, one writer.
    final class Workers: Sendable {
        let fetcher: HTTPFetcher
        let pool: DecodeWorkerPool
        let files: DecodeWorkerPool
        let writer: RenderWriter
        /// Requests in flight, over all hosts and per host.
        let limiter: RequestLimiter

        init(_ configuration: WarmConfiguration, logger: Logger) {
            fetcher = HTTPFetcher(
                policy: NetworkPolicy(allowPrivateNetworks: configuration.allowPrivateNetworks, allowedHosts: Set(configuration.allowedHosts)),
                limits: configuration.fetchLimits,
                maxConnectionsPerHost: configuration.maxConnectionsPerHost,
                streamsPerConnection: configuration.streamsPerConnection,
                caFile: configuration.caFile,
                trace: logger
            )
            // Until the first answer times a request, the window is one connection's
            // streams, as any HTTP/2 client sends at once: far away, the round trips before
            // that answer (TCP, TLS, HTTP/2's settings, the request) bring that many photos,
            // not sixteen, and a host's line is long enough from its first request for the
            // connections it will need to open together (ConnectionSpread). A host that
            // turns out to refuse has had no more than that.
            limiter = RequestLimiter(total: configuration.requestsInFlight,
                                     perHost: min(configuration.requestsPerHost, configuration.streamsPerConnection * configuration.maxConnectionsPerHost),
                                     perHTTP1Host: configuration.maxConnectionsPerHost, initialWindow: configuration.streamsPerConnection)
            let gate = DecodeMemoryGate(budgetBytes: configuration.maxDecodeMemory)
            pool = DecodeWorkerPool(threads: configuration.decodeThreads, gate: gate)
            // The batch's syncfs waits for the disk here, not on a decode thread (the files
            // themselves are written by the decode thread that rendered them).
            files = DecodeWorkerPool(threads: max(2, configuration.decodeThreads), name: "files")
            writer = RenderWriter(
                renderer: AvatarRenderer(tiers: configuration.tiers, outputFormat: configuration.outputFormat, quality: configuration.quality,
                                         maxPixels: configuration.maxPixels, crop: configuration.crop,
                                         memoryGate: gate),
                monograms: MonogramRenderer(tiers: configuration.tiers, outputFormat: configuration.monogramFormat, quality: configuration.quality),
                directory: CacheDirectory(root: configuration.cacheDirectory),
                decoders: pool, files: files
            )
        }

        func shutdown() async {
            pool.shutdown()
            files.shutdown()
            await fetcher.shutdown()
        }
    }
}
