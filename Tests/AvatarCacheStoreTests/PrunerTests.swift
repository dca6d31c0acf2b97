import Foundation
import GRDB
import Testing
@testable import AvatarCacheStore
import AvatarCacheTestKit

@Suite struct PrunerTests {
    func entry(_ hash: String, accessed: TimeInterval, files: [String: (String, Int64)]) -> CacheEntry {
        let cacheFiles = files.mapValues { CacheFile(filename: $0.0, width: 1, height: 1, fileSize: $0.1) }
        return CacheEntry(
            kind: .photo, filename: cacheFiles.values.first!.filename, lastAccess: Date(timeIntervalSince1970: accessed),
            fileSize: cacheFiles.values.reduce(0) { $0 + $1.fileSize }, contentSHA256: hash, sourceBytes: 1,
            sourceFormat: .jpeg, sourceWidth: 1, sourceHeight: 1, fetchedAt: Date(timeIntervalSince1970: accessed),
            etag: nil, lastModified: nil, files: cacheFiles
        )
    }

    /// Stores `entries` in a new index, prunes it, and returns the plan and the keys left.
    func prune(_ entries: [String: CacheEntry], _ pruner: Pruner) throws -> (plan: Pruner.Plan, remaining: Set<String>) {
        let directory = try Fixtures.temporaryDirectory("prune")
        defer { try? FileManager.default.removeItem(at: directory) }
        let index = try CacheIndex.open(CacheDirectory(root: directory), create: true)
        defer { index.close() }
        try index.write { db in
            for (key, entry) in entries { try EntryRecords.save(db, key: key, entry: entry) }
        }
        #expect(try index.read { try EntryRecords.cacheBytes($0) == EntryRecords.cacheBytesCounted($0) }, "the running total before")
        let plan = try index.write { try pruner.prune($0) }
        #expect(try index.read { try EntryRecords.cacheBytes($0) == EntryRecords.cacheBytesCounted($0) }, "the running total after")
        #expect(try index.read { try EntryRecords.cacheBytes($0) } == plan.bytesAfter)
        return (plan, Set(try index.snapshot().entries.keys))
    }

    @Test func underBudgetNothingHappens() throws {
        let (plan, remaining) = try prune(["u1": entry("a", accessed: 1, files: ["330": ("a-330.jpg", 10)])], Pruner(budgetBytes: 100))
        #expect(plan.evicted.isEmpty && plan.filesToDelete.isEmpty && plan.bytesBefore == 10)
        #expect(remaining == ["u1"])
    }

    @Test func overBudgetEvictsOldestFirstDownTo80Percent() throws {
        // Five entries of 30 bytes each = 150 bytes, budget 100: trim to ≤ 80.
        var entries: [String: CacheEntry] = [:]
        for index in 0..<5 {
            let name = "h\(index)-330.jpg"
            entries["u\(index)"] = entry("h\(index)", accessed: TimeInterval(100 - index * 10), files: ["330": (name, 30)])
        }
        let (plan, remaining) = try prune(entries, Pruner(budgetBytes: 100, trimRatio: 0.8))
        // Oldest are u4 (60), u3 (70), u2 (80): evicting two leaves 90 > 80, three leaves 60.
        #expect(plan.evicted == ["u4", "u3", "u2"])
        #expect(Set(plan.filesToDelete) == ["h4-330.jpg", "h3-330.jpg", "h2-330.jpg"])
        #expect(plan.bytesBefore - plan.freedBytes == 60)
        #expect(remaining == ["u0", "u1"])
    }

    /// A monogram is drawn again from the index without the network; a photo is not:
    /// monograms go first, however recently used, then photos by last access.
    @Test func monogramsAreEvictedBeforePhotos() throws {
        var entries: [String: CacheEntry] = [:]
        for index in 0..<3 {
            entries["photo\(index)"] = entry("p\(index)", accessed: TimeInterval(index), files: ["330": ("p\(index)-330.jpg", 30)])
            var monogram = entry("m\(index)", accessed: TimeInterval(100 + index), files: ["330": ("m\(index)-330.png", 10)])
            monogram.kind = .monogram
            entries["monogram:v1:M\(index)"] = monogram
        }
        // 120 bytes, budget 100, trim to 80: the three monograms (30), then the oldest photo.
        let (plan, remaining) = try prune(entries, Pruner(budgetBytes: 100, trimRatio: 0.8))
        #expect(plan.evicted == ["monogram:v1:M0", "monogram:v1:M1", "monogram:v1:M2", "photo0"])
        #expect(remaining == ["photo1", "photo2"])
        // The walk uses the index, not a sort of every entry.
        let directory = try Fixtures.temporaryDirectory("prune-plan")
        defer { try? FileManager.default.removeItem(at: directory) }
        let index = try CacheIndex.open(CacheDirectory(root: directory), create: true)
        defer { index.close() }
        let queryPlan = try index.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + Pruner.evictionOrderSQL).map { $0["detail"] as String }.joined(separator: "; ")
        }
        #expect(queryPlan.contains("entry_by_eviction") && !queryPlan.contains("TEMP B-TREE"), "\(queryPlan)")
    }

    @Test func tiersSharingOneFileAreFreedWithTheirEntry() throws {
        // Sources smaller than the smallest tier: both tiers name one file. Ten of them,
        // 30 bytes each = 300, budget 200, trim to 160: four evicted leave 180, five 150.
        var entries: [String: CacheEntry] = [:]
        for index in 0..<10 {
            let name = "t\(index)-900.jpg"
            entries["u\(index)"] = entry("t\(index)", accessed: TimeInterval(index), files: ["330": (name, 30), "900": (name, 30)])
        }
        let (plan, remaining) = try prune(entries, Pruner(budgetBytes: 200, trimRatio: 0.8))
        #expect(plan.evicted == ["u0", "u1", "u2", "u3", "u4"])
        #expect(Set(plan.filesToDelete) == Set((0..<5).map { "t\($0)-900.jpg" }))
        #expect(plan.bytesBefore - plan.freedBytes == 150)
        #expect(remaining == Set((5..<10).map { "u\($0)" }))
    }

    @Test func aFileStillUsedByAnotherEntryIsNeverDeleted() throws {
        // Two URLs with the same content share one file; the older one is evicted.
        let shared = ["330": ("s-330.jpg", Int64(60))]
        let (plan, remaining) = try prune([
            "old": entry("s", accessed: 1, files: shared),
            "new": entry("s", accessed: 5, files: shared),
            "other": entry("o", accessed: 3, files: ["330": ("o-330.jpg", 60)]),
        ], Pruner(budgetBytes: 100))
        #expect(plan.evicted == ["old", "other"])
        #expect(plan.filesToDelete == ["o-330.jpg"])
        #expect(remaining == ["new"])
    }
}
