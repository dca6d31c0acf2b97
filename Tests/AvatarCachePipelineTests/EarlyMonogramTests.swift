import Foundation
import Synchronization
import Testing
import AvatarCacheConfiguration
import AvatarCachePipeline
import AvatarCacheTestKit
import AvatarCacheTestSupport

/// The monograms of profiles without a photo are known before any photo is: they are drawn
/// in the photo stage while its requests wait for their answers (far away, four round
/// trips), not after the last photo; the profiles whose photo fails get theirs after.
@Suite struct EarlyMonogramTests {
    @Test func photolessProfilesMonogramsAreDrawnWhileThePhotosAreAwaited() async throws {
        let photo = try Fixtures.photo("chelsea-96.jpg")
        let server = try FixtureServer(routes: ["/slow.jpg": .delayed(seconds: 1.5, bytes: photo), "/gone.jpg": .status(404)])
        defer { server.shutdown() }
        let directory = try Fixtures.temporaryDirectory("early-monograms")
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport([
            (id: "slow", name: "Slow Photo", url: server.url("/slow.jpg")),
            (id: "gone", name: "Gone Photo", url: server.url("/gone.jpg")),
            (id: "ada", name: "Ada Lovelace", url: nil),
            (id: "alan", name: "Alan Turing", url: nil),
        ], in: directory)
        let configuration = Fixtures.configuration(exports: [export], cache: directory.appendingPathComponent("cache"))
        let started = Date()
        // Each progress of the photo stage, with its time.
        let heard = Mutex<[(seconds: Double, done: Int, total: Int)]>([])
        let report = try await WarmPipeline(configuration: configuration, logger: .test, onProgress: { progress in
            guard progress.stage == "photos" else { return }
            heard.withLock { $0.append((Date().timeIntervalSince(started), progress.done, progress.total)) }
        }).run()

        #expect(report.downloaded == 1 && report.failed == 1, "\(report.failures.map(\.reason))")
        // Three monograms in all (the two photoless profiles and the failed photo's), each drawn once.
        #expect(report.monogramsRendered == 3)
        #expect(report.profilesWithPhoto == 1 && report.profilesWithMonogram == 3)
        let progress = heard.withLock { $0 }
        // Before the slow photo's answer (1.5 s), the stage had drawn the two photoless
        // profiles' monograms (and failed the 404): three of its four jobs done.
        let early = progress.filter { $0.seconds < 1.2 }.map(\.done).max() ?? 0
        #expect(early >= 3, "photo stage progress: \(progress)")
        // Its total counts them: two photos and two monograms.
        #expect(progress.last?.total == 4, "\(progress)")
    }
}
