import Foundation
import Testing
@testable import AvatarCacheStore
import AvatarCacheTestKit

/// metadata.json refreshed during a run at a bounded cost (`MetadataRefresh`): what a
/// reader finds stays close to the index without a write per commit.
@Suite struct MetadataRefreshTests {
    /// The policy itself, on a real index: the first commit of a first warm writes, then
    /// no more than once per `interval` however many commits come.
    @Test func theRefreshIsBoundedHoweverManyCommits() throws {
        let directory = try Fixtures.temporaryDirectory("metadata-refresh")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cacheDirectory = CacheDirectory(root: directory)
        let index = try CacheIndex.open(cacheDirectory, create: true)
        defer { index.close() }
        let started = Date()
        let refresh = MetadataRefresh(directory: cacheDirectory, store: RunStore(index: index), started: started)
        try refresh.begin(previousRunInterrupted: false)
        #expect(refresh.writes == 1 && cacheDirectory.fileSize(CacheDirectory.metadataName) != nil, "a first warm's document at once")
        #expect(try refresh.finalWriteNeeded == false, "the document is the one written, durably")
        // A commit of entries every 0.1 s for 100 s: 1,000 batches.
        for batch in 1...1000 { try refresh.committed(savedEntries: true, at: started.addingTimeInterval(Double(batch) / 10)) }
        #expect(refresh.writes >= 3 && refresh.writes <= 2 + Int(100 / MetadataRefresh.interval), "\(refresh.writes) writes")
        #expect(try refresh.finalWriteNeeded, "the documents during the run were not made durable")

        // A cache that has its document: nothing at the start nor at the first commit;
        // nothing later either while no commit changes what a reader finds.
        let again = MetadataRefresh(directory: cacheDirectory, store: RunStore(index: index), started: started)
        try again.begin(previousRunInterrupted: false)
        try again.committed(savedEntries: true, at: started.addingTimeInterval(1))
        #expect(again.writes == 0)
        try again.committed(savedEntries: false, at: started.addingTimeInterval(MetadataRefresh.interval + 1))
        #expect(again.writes == 1, "the entry saved at 1 s, written once the interval has passed")
        try again.committed(savedEntries: false, at: started.addingTimeInterval(3 * MetadataRefresh.interval))
        #expect(again.writes == 1, "nothing new")
    }
}
