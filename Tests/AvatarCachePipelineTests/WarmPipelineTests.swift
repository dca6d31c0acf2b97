import Foundation
import NIOConcurrencyHelpers
import Testing
@testable import AvatarCacheConfiguration
import AvatarCacheImagingTestSupport
@testable import AvatarCacheStore
@testable import AvatarCachePipeline
import AvatarCacheTestKit
import AvatarCacheTestSupport

/// End-to-end runs of the pipeline against a real HTTP server on 127.0.0.1.
@Suite struct WarmPipelineTests {
    static let photoNames = ["astronaut.jpg", "retina.jpg", "hubble.jpg", "chelsea-96.jpg", "coffee-rotated.jpg",
                             "motorcycle.webp", "logo.png", "coins.gif"]

    func server(with photos: [String] = photoNames) throws -> FixtureServer {
        var routes: [String: FixtureServer.Reply] = [:]
        for name in photos { routes["/photos/\(name)"] = .ok(bytes: try Fixtures.photo(name)) }
        return try FixtureServer(routes: routes)
    }

    func warm(_ configuration: WarmConfiguration) async throws -> RunReport {
        try await WarmPipeline(configuration: configuration, logger: .test).run()
    }

    @Test func happyPath() async throws {
        let server = try server()
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("happy")
        defer { try? FileManager.default.removeItem(at: directory) }
        var users = Self.photoNames.enumerated().map { (id: "u\($0.offset)", name: "User \($0.offset)", url: Optional(server.url("/photos/\($0.element)"))) }
        users.append((id: "nophoto", name: "No Photo", url: nil))
        let export = try Fixtures.writeUsersExport(users, in: directory)
        let cache = directory.appendingPathComponent("cache")

        let report = try await warm(Fixtures.configuration(exports: [export], cache: cache))

        #expect(report.profiles == 9 && report.profilesWithoutPhoto == 1)
        #expect(report.sources == 8 && report.downloaded == 8 && report.decoded == 8 && report.failed == 0)
        let metadata = try Fixtures.loadMetadata(cache)
        #expect(try Fixtures.loadDocument(cache).schemaVersion == MetadataDocument.schemaVersion)
        let photos = metadata.entries.filter { $0.value.kind == .photo }
        #expect(photos.count == 8)
        #expect(metadata.entries.count == 9, "eight photos and the monogram of the user without one")
        #expect(metadata.profiles["nophoto"]?.kind == .monogram)
        #expect(metadata.profiles["u0"]?.kind == .photo)
        for (url, entry) in photos {
            let bytes = try Fixtures.photo(String(url.split(separator: "/").last!))
            #expect(entry.contentSHA256 == sha256Hex(bytes), "content hash of \(url)")
            #expect(entry.sourceBytes == bytes.count)
            #expect(Set(entry.files.keys) == ["330", "900"], "both sizes for \(url)")
            #expect(entry.filename == entry.files["900"]?.filename)
            let distinct = Dictionary(entry.files.values.map { ($0.filename, $0.fileSize) }, uniquingKeysWith: { first, _ in first })
            #expect(entry.fileSize == distinct.values.reduce(0, +), "fileSize counts each distinct file once")
            #expect(entry.kind == .photo)
            let sourceWidth = try #require(entry.sourceWidth), sourceHeight = try #require(entry.sourceHeight)
            #expect(sourceWidth > 0 && sourceHeight > 0)
            #expect(abs(entry.fetchedAt.timeIntervalSinceNow) < 120 && abs(entry.lastAccess.timeIntervalSinceNow) < 120)
            for (tier, file) in entry.files {
                #expect(CacheDirectory.isCacheFileName(file.filename), "name \(file.filename)")
                #expect(file.filename.hasPrefix(entry.contentSHA256))
                let expectedSide = min(Int(tier)!, min(sourceWidth, sourceHeight))
                #expect(file.width == expectedSide && file.height == expectedSide, "\(url) tier \(tier)")
                let onDisk = try [UInt8](Data(contentsOf: cache.appendingPathComponent(file.filename)))
                #expect(Int64(onDisk.count) == file.fileSize)
                let pixels = try Pixels(decoding: onDisk)
                #expect(pixels.width == expectedSide && pixels.height == expectedSide)
            }
        }
        // retina.jpg (1411²) gives exactly 330 and 900; chelsea-96 (96×64) is not upscaled.
        let retina = try #require(metadata.entries[server.url("/photos/retina.jpg")])
        #expect(retina.files["330"]?.width == 330 && retina.files["900"]?.width == 900)
        let tiny = try #require(metadata.entries[server.url("/photos/chelsea-96.jpg")])
        #expect(tiny.files["330"]?.width == 64 && tiny.files["900"]?.width == 64)
        // No temporary file is left, and only cache files, metadata and the lock exist.
        let names = try Fixtures.fileNames(in: cache)
        #expect(!names.contains { $0.hasPrefix(".tmp-") })
        #expect(names.allSatisfy { CacheDirectory.isCacheFileName($0) || CacheDirectory.isBookkeeping($0) }, "\(names)")
        #expect(Set(names.filter(CacheDirectory.isCacheFileName)) == metadata.referencedFiles)
    }

    @Test func failuresAreClassifiedAndTheRestIsDone() async throws {
        let good = try Fixtures.photo("astronaut.jpg")
        let server = try FixtureServer(routes: [
            "/ok.jpg": .ok(bytes: good),
            "/unauthorized.jpg": .status(401),
            "/forbidden.jpg": .status(403),
            "/gone.jpg": .status(410),
            "/error.jpg": .status(500),
            "/slow.jpg": .delayed(seconds: 4, bytes: good),
            "/text.jpg": .ok(bytes: Array("<html><body>hello</body></html>".utf8)),
            "/truncated.jpg": .ok(bytes: Array(good.prefix(good.count / 2))),
            "/loop": .redirect("/loop"),
        ])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("failures")
        defer { try? FileManager.default.removeItem(at: directory) }
        let paths = ["/ok.jpg", "/missing.jpg", "/unauthorized.jpg", "/forbidden.jpg", "/gone.jpg", "/error.jpg",
                     "/slow.jpg", "/text.jpg", "/truncated.jpg", "/loop"]
        var users = paths.enumerated().map { (id: "u\($0.offset)", name: "U", url: Optional(server.url($0.element))) }
        users.append((id: "bad-url", name: "U", url: "ht!tp://nope"))
        users.append((id: "file-url", name: "U", url: "file:///etc/passwd"))
        let export = try Fixtures.writeUsersExport(users, in: directory)
        var configuration = Fixtures.configuration(exports: [export], cache: directory.appendingPathComponent("cache"))
        configuration.fetchLimits.timeout = 1.5
        configuration.fetchLimits.retries = 0   // retries have their own tests

        let started = Date()
        let report = try await warm(configuration)

        #expect(Date().timeIntervalSince(started) < 15, "a slow server must not hang the batch")
        #expect(report.downloaded == 1 && report.decoded == 1)
        #expect(report.failed == 11)
        let classes = Dictionary(uniqueKeysWithValues: report.failures.map { ($0.url, $0.failureClass) })
        #expect(classes[server.url("/missing.jpg")] == .notFound)
        #expect(classes[server.url("/gone.jpg")] == .notFound)
        #expect(classes[server.url("/unauthorized.jpg")] == .unauthorized)
        #expect(classes[server.url("/forbidden.jpg")] == .unauthorized)
        #expect(classes[server.url("/error.jpg")] == .httpStatus)
        #expect(classes[server.url("/slow.jpg")] == .timeout)
        #expect(classes[server.url("/text.jpg")] == .unsupportedFormat)
        #expect(classes[server.url("/truncated.jpg")] == .invalidImage)
        #expect(classes[server.url("/loop")] == .httpStatus)
        #expect(classes["ht!tp://nope"] == .invalidURL)
        #expect(classes["file:///etc/passwd"] == .blocked)
        #expect(report.failuresByClass["notFound"] == 2 && report.failuresByClass["unauthorized"] == 2)
        // The loop stopped at the redirect limit: 1 + 5 requests.
        #expect(server.requests.filter { $0.path == "/loop" }.count == 6)
        let metadata = try Fixtures.loadMetadata(directory.appendingPathComponent("cache"))
        #expect(metadata.entries.filter { $0.value.kind == .photo }.map(\.key) == [server.url("/ok.jpg")])
        // Every user still has something to show: the photo, or a monogram where it failed.
        #expect(metadata.profiles.count == 12)
        #expect(metadata.profiles.values.allSatisfy { $0.kind != .notCached && $0.cachedImagePath.count == 2 })
    }

    @Test func identicalBytesBehindDifferentURLsAreStoredOnce() async throws {
        let bytes = try Fixtures.photo("hubble.jpg")
        let server = try FixtureServer(routes: ["/a.jpg": .ok(bytes: bytes), "/b.jpg": .ok(bytes: bytes), "/c.jpg?v=2": .ok(bytes: bytes)])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("dedup")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([
            (id: "1", name: "A", url: server.url("/a.jpg")),
            (id: "2", name: "B", url: server.url("/b.jpg")),
            (id: "3", name: "C", url: server.url("/c.jpg?v=2")),
            (id: "4", name: "D", url: server.url("/a.jpg")),
        ], in: directory)
        let cache = directory.appendingPathComponent("cache")

        let report = try await warm(Fixtures.configuration(exports: [export], cache: cache))

        #expect(report.sources == 3, "one job per distinct URL")
        #expect(server.requests.filter { $0.path == "/a.jpg" }.count == 1)
        #expect(report.downloaded == 3 && report.decoded == 1 && report.reusedIdentical == 2)
        let metadata = try Fixtures.loadMetadata(cache)
        #expect(metadata.entries.count == 3)
        #expect(Set(metadata.entries.values.map(\.filename)).count == 1)
        #expect(report.monogramsRendered == 0, "everyone has a photo")
        #expect(try Fixtures.fileNames(in: cache).filter(CacheDirectory.isCacheFileName).count == 2)
    }

    @Test func pruneKeepsTheCacheUnderBudgetEvictingOldestFirst() async throws {
        let server = try server()
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("prune")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = directory.appendingPathComponent("cache")
        // First run: four photos, generous budget.
        let older = ["astronaut.jpg", "retina.jpg", "hubble.jpg", "motorcycle.webp"]
        let first = try Fixtures.writeUsersExport(older.map { (id: $0, name: $0, url: Optional(server.url("/photos/\($0)"))) }, in: directory, name: "first.json")
        _ = try await warm(Fixtures.configuration(exports: [first], cache: cache))
        // Second run, later: two other photos, and a budget the whole cache exceeds.
        let newer = ["logo.png", "coins.gif"]
        let second = try Fixtures.writeUsersExport(newer.map { (id: $0, name: $0, url: Optional(server.url("/photos/\($0)"))) }, in: directory, name: "second.json")
        // The budget counts the cache's files, not its bookkeeping (metadata.json, .lock).
        func budgeted() throws -> Int64 {
            try CacheDirectory(root: cache).listFiles().filter { !CacheDirectory.isBookkeeping($0.name) }.reduce(Int64(0)) { $0 + $1.size }
        }
        let before = try budgeted()
        var configuration = Fixtures.configuration(exports: [second], cache: cache)
        configuration.pruner.budgetBytes = 250_000
        try await Task.sleep(for: .milliseconds(1100))

        let report = try await warm(configuration)

        #expect(before > 250_000, "the setup must put the cache over budget (\(before))")
        let after = try budgeted()
        #expect(after <= 200_000, "cache is \(after) bytes, budget 250,000 × 0.8")
        #expect(report.cacheBytes == after)
        #expect(report.evicted >= 1)
        let metadata = try Fixtures.loadMetadata(cache)
        // The newest entries (this run's export) survive; evicted ones are the older ones.
        for name in newer { #expect(metadata.entries[server.url("/photos/\(name)")] != nil, "\(name) was just used") }
        #expect(metadata.entries.filter { $0.value.kind == .photo }.count == 6 - report.evicted)
        #expect(Set(try Fixtures.fileNames(in: cache).filter(CacheDirectory.isCacheFileName)) == metadata.referencedFiles)
    }

    @Test func privateNetworksAreRefusedByDefault() async throws {
        let server = try server()
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("private")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([(id: "1", name: "A", url: server.url("/photos/astronaut.jpg"))], in: directory)
        var configuration = Fixtures.configuration(exports: [export], cache: directory.appendingPathComponent("cache"))
        configuration.allowPrivateNetworks = false

        let report = try await warm(configuration)

        #expect(report.failuresByClass == ["blocked": 1])
        #expect(server.requests.isEmpty, "no request may reach a refused host")
    }

    @Test func aSecondRunWithinTheTTLMakesNoRequest() async throws {
        let server = try server()
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("ttl")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport(Self.photoNames.map { (id: $0, name: $0, url: Optional(server.url("/photos/\($0)"))) }, in: directory)
        let cache = directory.appendingPathComponent("cache")
        _ = try await warm(Fixtures.configuration(exports: [export], cache: cache))
        let requestsAfterFirst = server.requests.count
        let filesAfterFirst = try Fixtures.fileNames(in: cache)

        let report = try await warm(Fixtures.configuration(exports: [export], cache: cache))

        #expect(requestsAfterFirst == Self.photoNames.count)
        #expect(server.requests.count == requestsAfterFirst, "no request in the second run")
        #expect(report.fresh == Self.photoNames.count && report.downloaded == 0 && report.decoded == 0)
        #expect(try Fixtures.fileNames(in: cache) == filesAfterFirst)
    }

    @Test func leftoversOfAnInterruptedRunAreSwept() async throws {
        let server = try server()
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("sweep")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = directory.appendingPathComponent("cache")
        try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
        let orphan = String(repeating: "ab", count: 32) + "-330.jpg"
        for name in [".tmp-1234", orphan, "notes.txt"] {
            try Data("x".utf8).write(to: cache.appendingPathComponent(name))
        }
        let export = try Fixtures.writeUsersExport([(id: "1", name: "A", url: server.url("/photos/astronaut.jpg"))], in: directory)

        let report = try await warm(Fixtures.configuration(exports: [export], cache: cache))

        #expect(report.sweptFiles == 1, "the leftover at the start; the orphan is kept until the end in case it can be re-used")
        let names = try Fixtures.fileNames(in: cache)
        #expect(!names.contains(".tmp-1234") && !names.contains(orphan))
        #expect(names.contains("notes.txt"), "files that are not ours are left alone")
    }
}

import Crypto

func sha256Hex(_ bytes: [UInt8]) -> String {
    SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
}

/// The downloads' backlog: large bodies hold new downloads back at `limit`, small ones
/// only at their own, larger limit, and the bytes of the bodies downloading or waiting at
/// `byteLimit`; each change lets one waiting download look again, and every waiting one
/// gets its turn (waking one per removal of a large body left the rest waiting for good:
/// a run hung).
@Suite struct BacklogTests {
    /// A count the waiting tasks share.
    final class Count: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func add() { lock.withLock { count += 1 } }
        var value: Int { lock.withLock { count } }
    }

    /// A download asking for a place, from its own task.
    struct Admission {
        /// The ticket, and when it came (uptime nanoseconds).
        private let ticket = NIOLockedValueBox<(Backlog.Ticket, UInt64)?>(nil)

        init(_ backlog: Backlog) {
            Task { [ticket] in
                let admitted = await backlog.admit()
                ticket.withLockedValue { $0 = (admitted, DispatchTime.now().uptimeNanoseconds) }
            }
        }

        /// Its ticket once admitted, looking for at least `seconds` (by the clock, and as
        /// many 10 ms looks: a process busy with other tests' work runs late); nil if it
        /// still waits then.
        func admitted(within seconds: Double = 1) async -> Backlog.Ticket? {
            let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
            var looks = 0
            while true {
                if let (ticket, _) = ticket.withLockedValue({ $0 }) { return ticket }
                if looks >= Int(seconds * 100) && DispatchTime.now().uptimeNanoseconds >= deadline { return nil }
                looks += 1
                try? await Task.sleep(nanoseconds: 10_000_000)
            }
        }

        /// Whether it was still waiting `seconds` from now, judged by when its ticket came
        /// (not by how often it looked: a busy process can take seconds to make fifty looks).
        func notAdmitted(within seconds: Double = 1) async -> Bool {
            let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
            while DispatchTime.now().uptimeNanoseconds < deadline {
                try? await Task.sleep(nanoseconds: 10_000_000)
            }
            guard let (_, at) = ticket.withLockedValue({ $0 }) else { return true }
            return at > deadline
        }
    }

    /// A download admitted, its body of `bytes` downloaded.
    private func download(_ backlog: Backlog, bytes: Int) async -> Backlog.Ticket {
        let ticket = await backlog.admit()
        await backlog.downloaded(ticket, bytes: bytes)
        return ticket
    }

    @Test func smallBodiesHaveTheirOwnLargerLimit() async throws {
        let backlog = Backlog(limit: 2, small: 1000, smallLimit: 3, byteLimit: 1 << 30, slowAfter: 600)
        _ = await download(backlog, bytes: 999)
        _ = await download(backlog, bytes: 999)
        let large = await download(backlog, bytes: 1000)
        // Two small and one large body held: room for more of either.
        let more = try #require(await Admission(backlog).admitted())
        await backlog.downloaded(more, bytes: 5000)
        // Two large bodies held: a download waits until one is decoded.
        let waiting = Admission(backlog)
        #expect(await waiting.notAdmitted())
        await backlog.release(large)
        let after = try #require(await waiting.admitted())
        // Three small bodies held: the same, for the small limit.
        await backlog.downloaded(after, bytes: 10)
        let waitingAgain = Admission(backlog)
        #expect(await waitingAgain.notAdmitted())
        await backlog.release(after)
        #expect(await waitingAgain.admitted() != nil)
    }

    /// Far away, a round trip's answers arrive together: small bodies wait up to the
    /// requests window, so the next requests go out while those are decoded (at 100 ms a
    /// fixed 32 left the decode threads idle a round trip in every burst).
    @Test func smallBodiesMayWaitUpToTheRequestsWindow() async throws {
        let window = NIOLockedValueBox(0)
        let backlog = Backlog(limit: 2, small: 1000, smallLimit: 3, byteLimit: 1 << 30, slowAfter: 600,
                              window: { window.withLockedValue { $0 } })
        let first = await download(backlog, bytes: 10)
        for _ in 0..<2 { _ = await download(backlog, bytes: 10) }
        // Three small bodies wait, the window is below them: a download waits.
        let blocked = Admission(backlog)
        #expect(await blocked.notAdmitted())
        // The window grows to 5: the small bodies waiting may reach it.
        window.withLockedValue { $0 = 5 }
        await backlog.release(first)
        let third = try #require(await blocked.admitted())
        await backlog.downloaded(third, bytes: 10)
        let fourth = try #require(await Admission(backlog).admitted())
        await backlog.downloaded(fourth, bytes: 10)
        let fifth = try #require(await Admission(backlog).admitted())
        await backlog.downloaded(fifth, bytes: 10)
        // Five wait: the window's bound holds.
        #expect(await Admission(backlog).notAdmitted())
    }

    @Test func downloadsCountByTheirContentLengthBeforeTheirBody() async throws {
        let backlog = Backlog(limit: 100, small: 1000, byteLimit: 10_000, slowAfter: 600)
        // Nothing admitted: a download always starts, whatever its size.
        let first = await backlog.admit()
        await backlog.sized(first, bytes: 20_000)
        // 20,000 bytes on their way: over the limit before a byte of them has come.
        let second = Admission(backlog)
        #expect(await second.notAdmitted())
        await backlog.release(first)
        let secondTicket = try #require(await second.admitted())
        await backlog.sized(secondTicket, bytes: 4000)
        // 4,000 declared, and a third counted at the mean size so far (12,000): over.
        let third = try #require(await Admission(backlog).admitted())
        let fourth = Admission(backlog)
        #expect(await fourth.notAdmitted())
        // The third's own size, once known, replaces the mean: 4,000 + 3,000, room again.
        await backlog.sized(third, bytes: 3000)
        #expect(await fourth.admitted() != nil)
    }

    @Test func aDownloadStillUnderWayAfterSlowAfterStopsCounting() async throws {
        let backlog = Backlog(limit: 100, small: 1000, byteLimit: 10_000, slowAfter: 2)
        // A server declares 50,000 bytes and sends them slowly: over the limit at once.
        let slow = await backlog.admit()
        await backlog.sized(slow, bytes: 50_000)
        let waiting = Admission(backlog)
        #expect(await waiting.notAdmitted(within: 0.5))
        // Two seconds after it started, it no longer holds the others back.
        let next = try #require(await waiting.admitted(within: 3))
        await backlog.sized(next, bytes: 4000)
        // Its body, once come, counts again: 50,000 waiting for their decode.
        await backlog.downloaded(slow, bytes: 50_000)
        let after = Admission(backlog)
        #expect(await after.notAdmitted())
        await backlog.release(slow)
        #expect(await after.admitted() != nil)
    }

    /// While the decode threads starve (every queued body waits for memory), one download
    /// more starts beyond the bounds at a time, at most `extraLimit` such bodies are held,
    /// and a stale word from the pool (an older sequence) changes nothing.
    @Test func starvingDecodeThreadsLetOneDownloadMoreStartAtATime() async throws {
        let backlog = Backlog(limit: 1, small: 1000, byteLimit: 1 << 30, slowAfter: 600)
        let large = await download(backlog, bytes: 5000)
        let first = Admission(backlog)
        #expect(await first.notAdmitted(within: 0.3), "at the bound")
        await backlog.starving(true, sequence: 1)
        let extra = try #require(await first.admitted())
        // One extra downloading: the next waits for its body.
        let second = Admission(backlog)
        #expect(await second.notAdmitted(within: 0.3))
        await backlog.downloaded(extra, bytes: 5000)
        let secondTicket = try #require(await second.admitted())
        await backlog.downloaded(secondTicket, bytes: 5000)
        // Two extra bodies held: no third, starving or not.
        let third = Admission(backlog)
        #expect(await third.notAdmitted(within: 0.3))
        // Fed again: no more beyond the bounds; a stale "starving" is ignored.
        await backlog.starving(false, sequence: 3)
        await backlog.release(extra)
        await backlog.starving(true, sequence: 2)
        #expect(await third.notAdmitted(within: 0.3))
        // Within the bounds again once the bodies are decoded.
        await backlog.release(large)
        await backlog.release(secondTicket)
        #expect(await third.admitted() != nil)
    }

    /// Far away a round trip's answers come together: the first size known lets every
    /// waiting download that fits start at once (woken one per change, the requests grew
    /// threefold a round trip, a slow start of five round trips at 250 ms), within the
    /// bytes and within the bodies that could then wait.
    @Test func oneSizeLetsEveryWaitingDownloadThatFitsStart() async {
        let backlog = Backlog(limit: 2, small: 1000, byteLimit: 5000, slowAfter: 600, window: { 50 })
        // Five downloads before any size is known, each counted at a small body's bound: the bytes are full.
        var first: [Backlog.Ticket] = []
        for _ in 0..<5 { first.append(await backlog.admit()) }
        let waiting = (0..<30).map { _ in Admission(backlog) }
        #expect(await waiting[0].notAdmitted(within: 0.2))
        // The first headers: 10 bytes. Thirty more of 10 fit in the bytes, and beside the
        // five under way within the 50 bodies the window lets wait: all start now.
        await backlog.sized(first[0], bytes: 10)
        var admitted = 0
        for admission in waiting where await admission.admitted(within: 1) != nil { admitted += 1 }
        #expect(admitted == 30)

        // With a window of 0, the small bodies may wait 16 (8 times the limit): eleven start beside the five.
        let narrow = Backlog(limit: 2, small: 1000, byteLimit: 5000, slowAfter: 600)
        var under: [Backlog.Ticket] = []
        for _ in 0..<5 { under.append(await narrow.admit()) }
        let queued = (0..<30).map { _ in Admission(narrow) }
        #expect(await queued[0].notAdmitted(within: 0.2))
        await narrow.sized(under[0], bytes: 10)
        try? await Task.sleep(nanoseconds: 300_000_000)
        var started = 0
        for admission in queued where await admission.admitted(within: 0.01) != nil { started += 1 }
        #expect(started == 11)
        // Whatever waits is let go as the bodies come and go.
        for ticket in under {
            await narrow.downloaded(ticket, bytes: 10)
            await narrow.release(ticket)
        }
    }

    @Test func eachChangeLetsOneWaitingDownloadGoAndEveryOneGetsItsTurn() async {
        let backlog = Backlog(limit: 1, small: 1000, byteLimit: 1 << 30, slowAfter: 600)
        let large = await download(backlog, bytes: 2000)
        let admittedCount = Count(), sizedCount = Count()
        let waiters = (0..<3).map { _ in
            Task {
                let ticket = await backlog.admit()
                admittedCount.add()
                // The download's headers take a while; then a small body.
                try? await Task.sleep(nanoseconds: 100_000_000)
                await backlog.sized(ticket, bytes: 10)
                sizedCount.add()
                await backlog.downloaded(ticket, bytes: 10)
                await backlog.release(ticket)
            }
        }
        try? await Task.sleep(nanoseconds: 100_000_000)
        #expect(admittedCount.value == 0)
        await backlog.release(large)
        // One starts; the others wait for its size rather than all starting before any
        // is known.
        try? await Task.sleep(nanoseconds: 50_000_000)
        #expect(admittedCount.value == 1)
        #expect(sizedCount.value == 0)
        // Each small body's news lets the next go: all three get through.
        for _ in 0..<200 where sizedCount.value < 3 { try? await Task.sleep(nanoseconds: 10_000_000) }
        #expect(sizedCount.value == 3)
        // Whatever still waits (the test failed) is let go rather than left hanging.
        for _ in 0..<3 where admittedCount.value < 3 {
            await backlog.release(await download(backlog, bytes: 2000))
        }
        for waiter in waiters { await waiter.value }
    }
}
