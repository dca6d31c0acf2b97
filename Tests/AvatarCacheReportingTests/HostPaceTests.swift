import Foundation
import Testing
import AvatarCacheConfiguration
import AvatarCacheFetching
import AvatarCachePipeline
import AvatarCacheReporting
import AvatarCacheSupport
import AvatarCacheTestKit
import AvatarCacheTestSupport

/// Every host at its own pace: a host that says "later" holds its own line until the time
/// it names, its photos not failed for waiting, within --max-host-wait; other hosts never
/// wait for it; the report says per host what it asked for. Every server is a real one on
/// 127.0.0.1.
struct HostPaceTests {
    /// How a rate-limited host says "later".
    enum Form: String, CaseIterable, Sendable {
        case retryAfterSeconds, retryAfterDate, rateLimit, xRateLimit
    }

    /// One photo a second (a fixed window: the Unix second), any other request inside the
    /// second refused with `429` in the form's headers; an answer in the `RateLimit` forms
    /// also says the second's photo is spent.
    final class OnePhotoASecond: @unchecked Sendable {
        let form: Form
        let photo: [UInt8]
        private let lock = NSLock()
        private var lastSecond = -1
        private(set) var served: [Date] = []
        private(set) var refused = 0

        init(form: Form, photo: [UInt8]) {
            self.form = form
            self.photo = photo
        }

        static let httpDate: DateFormatter = {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            return formatter
        }()

        func reply() -> FixtureServer.Reply {
            lock.withLock {
                let now = Date()
                let second = Int(now.timeIntervalSince1970.rounded(.down))
                let reset = second + 1
                let spent: [(String, String)]
                switch form {
                case .retryAfterSeconds, .retryAfterDate: spent = []
                case .rateLimit: spent = [("RateLimit-Policy", "\"default\";q=1;w=1"), ("RateLimit", "\"default\";r=0;t=1")]
                case .xRateLimit: spent = [("X-RateLimit-Limit", "1"), ("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", String(reset))]
                }
                if second != lastSecond {
                    lastSecond = second
                    served.append(now)
                    return .ok(bytes: photo, headers: spent)
                }
                refused += 1
                switch form {
                case .retryAfterSeconds: return .statusWithHeaders(429, [("Retry-After", "1")])
                case .retryAfterDate:
                    let date = Self.httpDate.string(from: Date(timeIntervalSince1970: Double(reset)))
                    return .statusWithHeaders(429, [("Retry-After", date)])
                case .rateLimit, .xRateLimit: return .statusWithHeaders(429, spent)
                }
            }
        }
    }

    /// A cache in a new temporary directory and the export of `urls`, one profile each.
    func configuration(_ urls: [String], label: String) throws -> (WarmConfiguration, URL) {
        let directory = try Fixtures.temporaryDirectory(label)
        let export = try Fixtures.writeUsersExport(urls.enumerated().map { (id: "u\($0.offset)", name: "U", url: Optional($0.element)) }, in: directory)
        return (Fixtures.configuration(exports: [export], cache: directory.appendingPathComponent("cache")), directory)
    }

    /// The key the limiter and the report name a fixture server by.
    func hostKey(_ server: FixtureServer) -> String { "http://127.0.0.1:\(server.port)" }

    @Test(arguments: Form.allCases)
    func aRateLimitedHostLosesNoPhotoAndHoldsUpNoOther(form: Form) async throws {
        // 12 photos behind one a second, beside 12 on a good host; the default 2 retries:
        // a photo that waits for its host's pace spends none of them.
        let photo = try Fixtures.photo("chelsea-96.jpg")
        let limit = OnePhotoASecond(form: form, photo: photo)
        var badRoutes: [String: FixtureServer.Reply] = [:]
        for index in 0..<12 { badRoutes["/limited\(index).jpg"] = .computed { limit.reply() } }
        let bad = try FixtureServer(routes: badRoutes)
        defer { bad.shutdown() }
        var goodRoutes: [String: FixtureServer.Reply] = [:]
        for index in 0..<12 { goodRoutes["/good\(index).jpg"] = .ok(bytes: photo) }
        let good = try FixtureServer(routes: goodRoutes)
        defer { good.shutdown() }
        let urls = (0..<12).flatMap { [bad.url("/limited\($0).jpg"), good.url("/good\($0).jpg")] }
        let (configuration, directory) = try configuration(urls, label: "pace-\(form.rawValue)")
        defer { try? FileManager.default.removeItem(at: directory) }

        let started = Date()
        let report = try await WarmPipeline(configuration: configuration, logger: .test).run()
        let elapsed = Date().timeIntervalSince(started)

        #expect(report.failed == 0 && report.downloaded == 24, "\(form): \(report.failures.map(\.reason))")
        #expect(limit.served.count == 12)
        // The good host's photos were all asked for in the run's first moments, while the
        // limited host's took one a second.
        let goodLast = try #require(good.requests.map(\.at).max())
        #expect(goodLast.timeIntervalSince(started) < 3, "\(form): the good host's last request \(goodLast.timeIntervalSince(started)) s in")
        // 12 windows of a second: the floor is 11 s after the first; the run within 1.3× of it, and a second.
        #expect(elapsed < 11 * 1.3 + 1, "\(form): \(elapsed) s for 12 photos at one a second")
        // What the report says of the limited host.
        let host = try #require(report.hosts.first { $0.host == hostKey(bad) }, "\(report.hosts)")
        #expect(host.answered == 12 && host.requests == 12 + host.refusalCount, "\(host)")
        #expect(host.refusals.keys.allSatisfy { $0 == "429" } && host.refusalCount == limit.refused)
        #expect(host.waitSeconds > 5 && host.outOfBudget == nil, "\(host)")
        switch form {
        case .retryAfterSeconds, .retryAfterDate:
            // Refused, its requests at once halved down to one.
            #expect(host.refusalCount >= 1 && host.lowestRequestsAtOnce == 1, "\(host)")
        case .rateLimit, .xRateLimit:
            // Each answer says the second is spent: the next request waits for its reset.
            // Refused: the first requests, sent together before any answer (the host's
            // connections), and none after.
            #expect(host.refusalCount <= configuration.maxConnectionsPerHost, "\(form): \(host)")
        }
        let goodHost = try #require(report.hosts.first { $0.host == hostKey(good) })
        #expect(goodHost.refusalCount == 0 && goodHost.waitSeconds == 0 && goodHost.answered == 12)
        #expect(report.summary.contains("host \(hostKey(bad)) slowed the run"), "\(report.summary)")
    }

    @Test func aHostAskingForAnHourFailsItsPhotosPastTheBudgetKeepingTheirCopies() async throws {
        let photo = try Fixtures.photo("chelsea-96.jpg")
        var routes: [String: FixtureServer.Reply] = [:]
        // Stale at once (max-age=0): the next run asks again.
        for index in 0..<20 { routes["/p\(index).jpg"] = .ok(bytes: photo, headers: [("Cache-Control", "max-age=0")]) }
        let server = try FixtureServer(routes: routes)
        defer { server.shutdown() }
        let urls = (0..<20).map { server.url("/p\($0).jpg") }
        var (configuration, directory) = try configuration(urls, label: "pace-budget")
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try await WarmPipeline(configuration: configuration, logger: .test).run()
        #expect(first.downloaded == 20 && first.failed == 0)
        // No host slowed it: no per-host lines.
        let quiet = ReportOutputs.prometheus(first, exitCode: 0)
        #expect(quiet.contains("avatar_cache_limited_hosts 0") && !quiet.contains("avatar_cache_host_"), "\(quiet)")
        #expect(!ReportOutputs.markdown(first, exitCode: 0).contains("slowed the run"))

        // Now every photo is stale and the host answers 503 Retry-After: 3600.
        for index in 0..<20 { server.setRoute("/p\(index).jpg", .statusWithHeaders(503, [("Retry-After", "3600")])) }
        configuration.fetchLimits.maxHostWait = 1
        let before = server.requests.count
        let started = Date()
        let second = try await WarmPipeline(configuration: configuration, logger: .test).run()
        let elapsed = Date().timeIntervalSince(started)

        #expect(second.failed == 20 && second.failuresByClass == ["rateLimited": 20], "\(second.failuresByClass)")
        #expect(second.failures.allSatisfy { $0.reason == "the host asked us to wait 3,600 s; over --max-host-wait 1 s" && $0.keptCachedPhoto },
                "\(second.failures.map(\.reason))")
        #expect(elapsed < 5, "failed at once, not after an hour: \(elapsed) s")
        // Only the requests already in flight at the refusal were sent; the rest failed in line.
        let asked = server.requests.count - before
        #expect(asked >= 1 && asked <= configuration.maxConnectionsPerHost, "\(asked) requests")
        let host = try #require(second.hosts.first { $0.host == hostKey(server) })
        #expect(host.outOfBudget == "the host asked us to wait 3,600 s; over --max-host-wait 1 s" && host.refusals == ["503": asked])
        #expect(second.summary.contains("host \(hostKey(server)) slowed the run") && second.summary.contains("over --max-host-wait"), "\(second.summary)")
        // The metrics file and the step summary say it per host.
        let key = hostKey(server)
        let metrics = ReportOutputs.prometheus(second, exitCode: 3)
        for line in ["avatar_cache_limited_hosts 1", "avatar_cache_host_requests{host=\"\(key)\"} \(host.requests)",
                     "avatar_cache_host_refusals{host=\"\(key)\",status=\"503\"} \(asked)",
                     "avatar_cache_host_out_of_budget{host=\"\(key)\"} 1", "avatar_cache_host_requests_at_once{host=\"\(key)\"} \(host.requestsAtOnce)"] {
            #expect(metrics.contains(line + "\n"), "\(line) in \(metrics)")
        }
        let stepSummary = ReportOutputs.markdown(second, exitCode: 3)
        #expect(stepSummary.contains("| \(key) | \(host.requests) | \(asked) (503 ×\(asked)) |")
                && stepSummary.contains("| remaining photos failed: the host asked us to wait 3,600 s; over --max-host-wait 1 s |"), "\(stepSummary)")
        // Every profile still shows its cached photo.
        let metadata = try Fixtures.loadMetadata(configuration.cacheDirectory)
        for url in urls {
            let entry = try #require(metadata.entries[url])
            #expect(entry.files.values.allSatisfy { FileManager.default.fileExists(atPath: configuration.cacheDirectory.appendingPathComponent($0.filename).path) })
        }

        // The next run asks for them again at once (not held back as recently failed).
        for index in 0..<20 { server.setRoute("/p\(index).jpg", .ok(bytes: photo)) }
        let third = try await WarmPipeline(configuration: configuration, logger: .test).run()
        #expect(third.skippedRecentlyFailed == 0 && third.failed == 0 && third.downloaded == 20, "\(third.summary)")
    }

    @Test func photosFailedOutOfBudgetGoFirstOnTheNextRun() async throws {
        // One request at a time, so that the server sees the plan's order. 5 photos ranked
        // first (/q) and 10 after them (/p), all on one host, stale at once.
        let photo = try Fixtures.photo("chelsea-96.jpg")
        let fresh: FixtureServer.Reply = .ok(bytes: photo, headers: [("Cache-Control", "max-age=0")])
        var routes: [String: FixtureServer.Reply] = [:]
        for index in 0..<5 { routes["/q\(index).jpg"] = fresh }
        for index in 0..<10 { routes["/p\(index).jpg"] = fresh }
        let server = try FixtureServer(routes: routes)
        defer { server.shutdown() }
        let urls = (0..<5).map { server.url("/q\($0).jpg") } + (0..<10).map { server.url("/p\($0).jpg") }
        var (configuration, directory) = try configuration(urls, label: "pace-first")
        defer { try? FileManager.default.removeItem(at: directory) }
        configuration.requestsInFlight = 1
        configuration.fetchLimits.maxHostWait = 1
        #expect(try await WarmPipeline(configuration: configuration, logger: .test).run().downloaded == 15)
        // The /q photos answered, then the first /p asks for an hour: the other /p fail unasked.
        for index in 0..<10 { server.setRoute("/p\(index).jpg", .statusWithHeaders(503, [("Retry-After", "3600")])) }
        var before = server.requests.count
        let second = try await WarmPipeline(configuration: configuration, logger: .test).run()
        // The plan's order puts the /q first, but the download tasks, started in that order,
        // may reach the one request slot a little out of it: a /p asked before the last /q
        // fails the /q still waiting too. Whatever the order: one /p asked, its hour over
        // the budget failing every photo still waiting, unasked.
        let asked = server.requests.dropFirst(before).map(\.path)
        let askedP = asked.filter { $0.hasPrefix("/p") }
        #expect(askedP.count == 1, "\(asked)")
        #expect(second.downloaded == asked.count - 1, "\(second.summary) \(asked)")
        #expect(second.failuresByClass == ["rateLimited": 15 - second.downloaded], "\(second.summary)")
        // Those failed out of budget are asked first on the next run: taken together, before
        // the others (their mean place in the requests is earlier).
        let failed = Set(urls.map { "/" + $0.split(separator: "/").last! }).subtracting(asked.filter { $0.hasPrefix("/q") })
        for index in 0..<10 { server.setRoute("/p\(index).jpg", fresh) }
        before = server.requests.count
        let third = try await WarmPipeline(configuration: configuration, logger: .test).run()
        #expect(third.downloaded == 15 && third.failed == 0 && third.skippedRecentlyFailed == 0, "\(third.summary)")
        let again = server.requests.dropFirst(before).map(\.path)
        let place = { (paths: Set<String>) -> Double in
            let places = again.indices.filter { paths.contains(again[$0]) }
            return Double(places.reduce(0, +)) / Double(max(1, places.count))
        }
        let others = Set(again).subtracting(failed)
        #expect(again.count == 15 && failed.count >= 10)
        #expect(others.isEmpty || place(failed) + 3 < place(others), "\(again)")
        // With the /p first, most of the first ten requests are theirs.
        #expect(again.prefix(10).filter { failed.contains($0) }.count >= 8, "\(again)")
    }

    @Test func aStoppedRunDoesNotWaitOutAHostsHold() async throws {
        // A host asking for 60 s (within the default 600 s budget): stopped a second in,
        // the run ends at once, its photos waiting not counted as tried.
        var routes: [String: FixtureServer.Reply] = [:]
        for index in 0..<10 { routes["/p\(index).jpg"] = .statusWithHeaders(429, [("Retry-After", "60")]) }
        let server = try FixtureServer(routes: routes)
        defer { server.shutdown() }
        let (configuration, directory) = try configuration((0..<10).map { server.url("/p\($0).jpg") }, label: "pace-stop")
        defer { try? FileManager.default.removeItem(at: directory) }
        let control = RunControl()
        let started = Date()
        Task {
            try await Task.sleep(for: .seconds(1))
            control.stop("SIGTERM")
        }
        let report = try await WarmPipeline(configuration: configuration, logger: .test, control: control).run()
        let elapsed = Date().timeIntervalSince(started)
        #expect(elapsed < 5, "stopped after \(elapsed) s")
        #expect(report.interrupted != nil && report.downloaded == 0)
        #expect(!report.failures.isEmpty && report.failures.allSatisfy { $0.reason == "the run stopped (SIGTERM) while its host held it" }, "\(report.failures.map(\.reason))")
    }

    @Test func aHostRefusingForeverEndsWithinTheBudget() async throws {
        // 429 to everything, each with a wait it should not be taken at its word for:
        // none, a negative one, a date in 1970, a garbage RateLimit. The run ends after
        // about the budget (2 s), every photo failed with a reason in words, none by a
        // spent retry.
        let refusals: [[(String, String)]] = [
            [], [("Retry-After", "-1")], [("Retry-After", "Thu, 01 Jan 1970 00:00:00 GMT")],
            [("RateLimit", "\"default\";r=zero;t=soon"), ("RateLimit-Policy", "q=;w")],
        ]
        var routes: [String: FixtureServer.Reply] = [:]
        for index in 0..<40 { routes["/p\(index).jpg"] = .statusWithHeaders(429, refusals[index % refusals.count]) }
        let server = try FixtureServer(routes: routes)
        defer { server.shutdown() }
        var (configuration, directory) = try configuration((0..<40).map { server.url("/p\($0).jpg") }, label: "pace-forever")
        defer { try? FileManager.default.removeItem(at: directory) }
        configuration.fetchLimits.maxHostWait = 2
        configuration.fetchLimits.retryBackoff = 0.1
        let started = Date()
        let report = try await WarmPipeline(configuration: configuration, logger: .test).run()
        let elapsed = Date().timeIntervalSince(started)
        #expect(report.failed == 40 && report.failuresByClass == ["rateLimited": 40], "\(report.failuresByClass)")
        #expect(report.failures.allSatisfy { $0.reason.hasSuffix("over --max-host-wait 2 s") }, "\(Set(report.failures.map(\.reason)))")
        #expect(elapsed < 2 + 4, "\(elapsed) s")
        let host = try #require(report.hosts.first)
        // Backing off from 0.1 s, doubled per refusal in a row, one request at a time:
        // a handful of requests, not one per photo and retry.
        #expect(host.requests == host.refusalCount && host.requests < 20 && host.lowestRequestsAtOnce != nil, "\(host)")
        #expect(host.waitSeconds <= 2, "\(host)")
    }
}
