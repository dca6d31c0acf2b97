import Foundation
import Testing
@testable import AvatarCacheFetching
import AvatarCacheModel
@testable import AvatarCachePipeline
import AvatarCacheReporting
import AvatarCacheStore
import AvatarCacheSupport
import AvatarCacheTestKit

/// The run's figures in the forms operators consume (`--metrics-file`, the CI step
/// summary), from a report made here, and the files they are written to.
@Suite struct ReportOutputsTests {
    /// A run of 12 profiles and 10 sources, 3 of them failed, 1.26 s long.
    static func report(hosts: [HostReport] = [], interrupted: String? = nil) -> RunReport {
        var report = RunReport(startedAt: Date(timeIntervalSince1970: 1_795_304_704.4), exports: ["users.json"],
                               cacheDirectory: "/var/cache/avatars", budgetBytes: 100_000_000)
        report.durationSeconds = 1.26
        report.profiles = 12
        report.profilesWithPhoto = 7
        report.profilesWithMonogram = 5
        report.sources = 10
        report.fresh = 2
        report.downloaded = 5
        report.notModified = 1
        report.decoded = 5
        report.failed = 3
        report.failuresByClass = ["notFound": 2, "timeout": 1]
        report.badRecords = 1
        report.bytesDownloaded = 123_456
        report.cacheBytes = 1_500_000
        report.evicted = 4
        report.hosts = hosts
        report.interrupted = interrupted
        return report
    }

    static let slowHost = HostReport(host: "https://photos.example.com:443", requests: 40, answered: 25, refusals: ["429": 11, "503": 2],
                                     waitSeconds: 12.5, requestsAtOnce: 2, outOfBudget: "held 130 s | over --max-host-wait")
    static let quietHost = HostReport(host: "https://quiet.example.com:443", requests: 3, answered: 3, refusals: [:],
                                      waitSeconds: 0, requestsAtOnce: 8)

    /// The samples by metric and labels.
    func samples(_ text: String) -> [String: String] {
        var samples: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            samples[String(parts[0])] = parts.count == 2 ? String(parts[1]) : "malformed: \(line)"
        }
        return samples
    }

    @Test func prometheusTextHasAGaugeForEveryFigure() {
        let text = ReportOutputs.prometheus(Self.report(), exitCode: 3)
        let samples = samples(text)
        #expect(samples["avatar_cache_last_run_timestamp_seconds"] == "1795304704")
        #expect(samples["avatar_cache_last_run_duration_seconds"] == "1.260")
        #expect(samples["avatar_cache_last_run_exit_code"] == "3")
        #expect(samples["avatar_cache_profiles"] == "12" && samples["avatar_cache_sources"] == "10")
        #expect(samples["avatar_cache_sources_fresh"] == "2" && samples["avatar_cache_sources_downloaded"] == "5")
        #expect(samples["avatar_cache_sources_not_modified"] == "1" && samples["avatar_cache_sources_decoded"] == "5")
        #expect(samples["avatar_cache_bytes_downloaded"] == "123456" && samples["avatar_cache_cache_bytes"] == "1500000")
        #expect(samples["avatar_cache_budget_bytes"] == "100000000" && samples["avatar_cache_evicted_entries"] == "4")
        #expect(samples["avatar_cache_bad_records"] == "1")
        // Every failure class, those without a failure at 0.
        for failureClass in FailureClass.allCases {
            let expected = ["notFound": "2", "timeout": "1"][failureClass.rawValue] ?? "0"
            #expect(samples["avatar_cache_sources_failed{class=\"\(failureClass.rawValue)\"}"] == expected, "\(failureClass)")
        }
        // No host slowed the run: one gauge says so, and no series per host.
        #expect(samples["avatar_cache_limited_hosts"] == "0")
        #expect(!text.contains("host_requests"))
    }

    /// The text exposition format's rules: each metric's HELP and TYPE before its samples,
    /// one sample a line, the text ending with a newline.
    @Test func prometheusTextIsWellFormed() throws {
        let text = ReportOutputs.prometheus(Self.report(hosts: [Self.slowHost, Self.quietHost]), exitCode: 0)
        #expect(text.hasSuffix("\n") && !text.hasSuffix("\n\n"))
        var described: [String: Set<String>] = [:]
        let sample = try Regex(#"^(avatar_cache_[a-z_]+)(\{([a-z]+="([^"\\]|\\.)*",?)+\})? -?[0-9]+(\.[0-9]{3})?$"#)
        for line in text.split(separator: "\n").map(String.init) {
            if line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") {
                let words = line.split(separator: " ")
                described[String(words[2]), default: []].insert(String(words[1]))
                if words[1] == "TYPE" { #expect(words.count == 4 && words[3] == "gauge", "\(line)") }
                continue
            }
            let match = try #require(line.wholeMatch(of: sample), "not a sample: \(line)")
            let name = String(try #require(match.output[1].substring))
            #expect(described[name] == ["HELP", "TYPE"], "\(name) sampled before its HELP and TYPE")
        }
        #expect(described.count >= 20)
    }

    @Test func aHostThatSlowedTheRunHasItsOwnSeriesItsLabelEscaped() {
        let odd = HostReport(host: "https://odd\"name\\.test:443", requests: 1, answered: 0, refusals: ["429": 1],
                             waitSeconds: 0, requestsAtOnce: 1)
        let samples = samples(ReportOutputs.prometheus(Self.report(hosts: [Self.quietHost, Self.slowHost, odd]), exitCode: 0))
        #expect(samples["avatar_cache_limited_hosts"] == "2", "the quiet host is not one")
        let slow = "host=\"https://photos.example.com:443\""
        #expect(samples["avatar_cache_host_requests{\(slow)}"] == "40")
        #expect(samples["avatar_cache_host_refusals{\(slow),status=\"429\"}"] == "11")
        #expect(samples["avatar_cache_host_refusals{\(slow),status=\"503\"}"] == "2")
        #expect(samples["avatar_cache_host_wait_seconds{\(slow)}"] == "12.500")
        #expect(samples["avatar_cache_host_requests_at_once{\(slow)}"] == "2")
        #expect(samples["avatar_cache_host_out_of_budget{\(slow)}"] == "1")
        #expect(samples["avatar_cache_host_out_of_budget{host=\"https://odd\\\"name\\\\.test:443\"}"] == "0")
        #expect(!samples.keys.contains { $0.contains("quiet.example.com") })
    }

    @Test func theStepSummaryIsAMarkdownTable() {
        let success = ReportOutputs.markdown(Self.report(), exitCode: 0)
        #expect(success.hasPrefix("### avatar-cache ✅ (exit 0)\n\n| figure | value |\n|---|---|\n"))
        for row in ["| profiles | 12 |", "| sources | 10 |", "| fresh (no request) | 2 |", "| downloaded | 5 |",
                    "| not modified (304) | 1 |", "| failed | 3 |", "| bad records | 1 |",
                    "| profiles showing a photo / monogram | 7 / 5 |", "| cache | 1.5 MB of 100.0 MB |", "| evicted | 4 |",
                    "| duration | 1.3 s |"] {
            #expect(success.contains("\n\(row)\n"), "\(row)")
        }
        // The failures by class, in name order.
        #expect(success.contains("\n| failure class | sources |\n|---|---|\n| notFound | 2 |\n| timeout | 1 |\n"))
        #expect(!success.contains("slowed the run") && !success.contains("Stopped early"))

        let failure = ReportOutputs.markdown(Self.report(hosts: [Self.slowHost], interrupted: "interrupted by SIGTERM"), exitCode: 3)
        #expect(failure.hasPrefix("### avatar-cache ❌ (exit 3)"))
        #expect(failure.contains("| https://photos.example.com:443 | 40 | 13 (429 ×11, 503 ×2) | 12.5 s | 2 | remaining photos failed: held 130 s \\| over --max-host-wait |"),
                "\(failure)")
        #expect(failure.hasSuffix("\nStopped early: interrupted by SIGTERM.\n\n"))
    }

    @Test func filesAreReplacedWholeOrAppendedTo() throws {
        let directory = try Fixtures.temporaryDirectory("report-outputs")
        defer { try? FileManager.default.removeItem(at: directory) }
        let metrics = directory.appendingPathComponent("avatar-cache.prom").path
        try ReportOutputs.writeAtomically(Data("first\n".utf8), to: metrics)
        try ReportOutputs.writeAtomically(Data("second\n".utf8), to: metrics)
        #expect(try String(contentsOfFile: metrics, encoding: .utf8) == "second\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["avatar-cache.prom"], "no temporary file left")
        #expect(throws: StoreError.self) {
            try ReportOutputs.writeAtomically(Data("x".utf8), to: directory.appendingPathComponent("absent/metrics.prom").path)
        }

        let summary = directory.appendingPathComponent("summary.md").path
        try ReportOutputs.append("one\n", to: summary)
        try ReportOutputs.append("two\n", to: summary)
        #expect(try String(contentsOfFile: summary, encoding: .utf8) == "one\ntwo\n")
    }

    @Test func anOutputPathIsCheckedBeforeTheRun() throws {
        let directory = try Fixtures.temporaryDirectory("report-paths")
        defer { try? FileManager.default.removeItem(at: directory) }
        func refusal(_ path: String) -> String? {
            do { try ReportOutputs.checkWritable(path, flag: "--report"); return nil } catch let error as ConfigurationError {
                return error.message
            } catch { return "\(error)" }
        }
        #expect(refusal(directory.appendingPathComponent("report.json").path) == nil)
        #expect(refusal(directory.path) == "--report \(directory.path) is a directory; give a file path")
        let absent = directory.appendingPathComponent("absent")
        #expect(refusal(absent.appendingPathComponent("report.json").path) == "--report \(absent.path)/report.json: the directory \(absent.path) does not exist")
    }
}
