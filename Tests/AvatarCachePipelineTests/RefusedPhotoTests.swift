import Foundation
import Testing
import AvatarCacheConfiguration
import AvatarCacheFetching
import AvatarCachePipeline
import AvatarCacheTestKit
import AvatarCacheTestSupport

/// A photo its host refuses while serving the others spends its own retries: it fails in
/// seconds with the host's answer as its reason, and the host's other photos never wait
/// for it. Whole warms, default retries and --max-host-wait, servers on 127.0.0.1.
@Suite(.serialized) struct RefusedPhotoTests {
    func warm(_ urls: [String], label: String) async throws -> (RunReport, Double) {
        let directory = try Fixtures.temporaryDirectory(label)
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = try Fixtures.writeUsersExport(urls.enumerated().map { (id: "u\($0.offset)", name: "U", url: Optional($0.element)) }, in: directory)
        let configuration = Fixtures.configuration(exports: [export], cache: directory.appendingPathComponent("cache"))
        let started = Date()
        let report = try await WarmPipeline(configuration: configuration, logger: .test).run()
        return (report, Date().timeIntervalSince(started))
    }

    @Test(arguments: [429, 503])
    func photosRefusedForeverFailInSecondsBesideTheHostsOthers(status: Int) async throws {
        // 120 photos of one host, among them 3 it refuses every time and 3 it refuses once,
        // each refusal naming Retry-After: 1.
        let photo = try Fixtures.photo("chelsea-96.jpg")
        let refusal: FixtureServer.Reply = .statusWithHeaders(status, [("Retry-After", "1")])
        var routes: [String: FixtureServer.Reply] = [:]
        for index in 0..<120 { routes["/p\(index).jpg"] = .ok(bytes: photo) }
        for index in [10, 50, 90] { routes["/p\(index).jpg"] = refusal }
        for index in [30, 70, 110] { routes["/p\(index).jpg"] = .sequence([refusal, .ok(bytes: photo)]) }
        let server = try FixtureServer(routes: routes)
        defer { server.shutdown() }
        let (report, elapsed) = try await warm((0..<120).map { server.url("/p\($0).jpg") }, label: "refused-\(status)")
        #expect(report.downloaded == 117 && report.failed == 3, "\(report.failuresByClass)")
        #expect(report.failures.allSatisfy { $0.failureClass == .rateLimited && $0.reason.hasPrefix("HTTP \(status)") },
                "\(report.failures.map(\.reason))")
        #expect(elapsed < 12, "three photos refused forever held the run \(elapsed) s")
        for index in [10, 50, 90] {
            let asked = server.requests.filter { $0.path == "/p\(index).jpg" }.count
            #expect(asked >= 3 && asked <= 6, "/p\(index).jpg asked \(asked) times: its own retries, not the host's budget")
        }
    }

    @Test func anExportWhoseOnlyHostRefusesOnePhotoForeverAndAnotherFiftyTimesEndsInSeconds() async throws {
        let photo = try Fixtures.photo("chelsea-96.jpg")
        var routes: [String: FixtureServer.Reply] = [:]
        for index in 0..<40 { routes["/p\(index).jpg"] = .ok(bytes: photo) }
        routes["/p5.jpg"] = .statusWithHeaders(429, [("Retry-After", "1")])
        routes["/p25.jpg"] = .sequence(Array(repeating: .statusWithHeaders(503, [("Retry-After", "1")]), count: 50) + [.ok(bytes: photo)])
        let server = try FixtureServer(routes: routes)
        defer { server.shutdown() }
        let (report, elapsed) = try await warm((0..<40).map { server.url("/p\($0).jpg") }, label: "refused-fifty")
        #expect(report.downloaded == 38 && report.failed == 2, "\(report.failuresByClass)")
        #expect(elapsed < 12, "\(elapsed) s")
        #expect(report.hosts.first.map { $0.waitSeconds < 5 } ?? true, "\(report.hosts)")
    }
}
