import AvatarCacheFetching
import AvatarCacheStore
import AvatarCacheModel
import AvatarCachePipeline
import AvatarCacheSupport
import Foundation
import Glibc

/// The run's figures in the forms operators consume: the Prometheus text format for
/// the node exporter's textfile collector, and a Markdown table for a CI job summary.
public enum ReportOutputs {
    /// Prometheus text exposition format, one gauge per figure.
    public static func prometheus(_ report: RunReport, exitCode: Int32) -> String {
        var lines: [String] = []
        func gauge(_ name: String, _ help: String, _ samples: [(labels: String, value: Double)]) {
            lines.append("# HELP avatar_cache_\(name) \(help)")
            lines.append("# TYPE avatar_cache_\(name) gauge")
            for sample in samples {
                let value = sample.value.rounded() == sample.value && abs(sample.value) < 1e15
                    ? String(Int64(sample.value)) : String(format: "%.3f", sample.value)
                lines.append("avatar_cache_\(name)\(sample.labels) \(value)")
            }
        }
        gauge("last_run_timestamp_seconds", "When the last run started (Unix time).", [("", report.startedAt.timeIntervalSince1970.rounded())])
        gauge("last_run_duration_seconds", "How long the last run took.", [("", report.durationSeconds)])
        gauge("last_run_exit_code", "The last run's exit code (0: success).", [("", Double(exitCode))])
        gauge("profiles", "Distinct profiles in the last run's exports.", [("", Double(report.profiles))])
        gauge("sources", "Distinct photo sources in the last run's exports.", [("", Double(report.sources))])
        gauge("sources_fresh", "Sources cached and fresh: no request.", [("", Double(report.fresh))])
        gauge("sources_downloaded", "Sources downloaded.", [("", Double(report.downloaded))])
        gauge("sources_not_modified", "Stale sources the server confirmed (304).", [("", Double(report.notModified))])
        gauge("sources_decoded", "Sources decoded and written.", [("", Double(report.decoded))])
        gauge("sources_failed", "Sources that failed, by class.",
              FailureClass.allCases.map { ("{class=\"\($0.rawValue)\"}", Double(report.failuresByClass[$0.rawValue] ?? 0)) })
        gauge("bad_records", "Export records reported as bad.", [("", Double(report.badRecords))])
        gauge("bytes_downloaded", "Bytes downloaded.", [("", Double(report.bytesDownloaded))])
        gauge("cache_bytes", "Bytes of all files in the cache after the run.", [("", Double(report.cacheBytes))])
        gauge("budget_bytes", "The cache budget.", [("", Double(report.budgetBytes))])
        gauge("evicted_entries", "Entries evicted by the prune.", [("", Double(report.evicted))])
        // Per host, only the hosts whose limits slowed the run (a run over many hosts
        // adds no series for the others).
        let limited = report.limitedHosts
        gauge("limited_hosts", "Hosts whose limits (429, 503, Retry-After, RateLimit) slowed the last run.", [("", Double(limited.count))])
        if !limited.isEmpty {
            func label(_ host: HostReport) -> String { "host=\"\(escaped(host.host))\"" }
            gauge("host_requests", "Requests sent to a host whose limits slowed the run.",
                  limited.map { ("{\(label($0))}", Double($0.requests)) })
            gauge("host_refusals", "A limited host's refusals, by status.",
                  limited.flatMap { host in host.refusals.sorted { $0.key < $1.key }.map { ("{\(label(host)),status=\"\(escaped($0.key))\"}", Double($0.value)) } })
            gauge("host_wait_seconds", "Seconds a host's limits held its requests (against --max-host-wait).",
                  limited.map { ("{\(label($0))}", $0.waitSeconds) })
            gauge("host_requests_at_once", "The requests a limited host took at once at the end of the run.",
                  limited.map { ("{\(label($0))}", Double($0.requestsAtOnce)) })
            gauge("host_out_of_budget", "1 when a host's remaining photos failed: its limits went past --max-host-wait.",
                  limited.map { ("{\(label($0))}", $0.outOfBudget == nil ? 0 : 1) })
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A Markdown summary, for `$GITHUB_STEP_SUMMARY`.
    public static func markdown(_ report: RunReport, exitCode: Int32) -> String {
        var text = "### avatar-cache \(exitCode == 0 ? "✅" : "❌") (exit \(exitCode))\n\n"
        text += "| figure | value |\n|---|---|\n"
        let rows: [(String, String)] = [
            ("profiles", "\(report.profiles)"), ("sources", "\(report.sources)"),
            ("fresh (no request)", "\(report.fresh)"), ("downloaded", "\(report.downloaded)"),
            ("not modified (304)", "\(report.notModified)"), ("decoded", "\(report.decoded)"),
            ("failed", "\(report.failed)"), ("bad records", "\(report.badRecords)"),
            ("profiles showing a photo / monogram", "\(report.profilesWithPhoto) / \(report.profilesWithMonogram)"),
            ("cache", "\(ByteSize.format(report.cacheBytes)) of \(ByteSize.format(report.budgetBytes))"),
            ("evicted", "\(report.evicted)"), ("duration", String(format: "%.1f s", report.durationSeconds)),
        ]
        for (name, value) in rows { text += "| \(name) | \(value) |\n" }
        if !report.failuresByClass.isEmpty {
            text += "\n| failure class | sources |\n|---|---|\n"
            for (name, count) in report.failuresByClass.sorted(by: { $0.key < $1.key }) { text += "| \(name) | \(count) |\n" }
        }
        let limited = report.limitedHosts
        if !limited.isEmpty {
            text += "\n| host whose limits slowed the run | requests | refused | held | at once at the end | outcome |\n|---|---|---|---|---|---|\n"
            for host in limited {
                let refused = host.refusalCount == 0 ? "0" : "\(host.refusalCount) (\(host.refusalsText))"
                let outcome = host.outOfBudget.map { "remaining photos failed: \(markdownCell($0))" } ?? ""
                text += "| \(markdownCell(host.host)) | \(host.requests) | \(refused) | \(String(format: "%.1f s", host.waitSeconds)) |"
                    + " \(host.requestsAtOnce) | \(outcome) |\n"
            }
        }
        if let interrupted = report.interrupted { text += "\nStopped early: \(interrupted).\n" }
        return text + "\n"
    }

    /// A label value as the Prometheus text format writes it: backslash, quote and newline escaped.
    static func escaped(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    /// Text in a Markdown table cell: its pipes escaped, on one line.
    static func markdownCell(_ value: String) -> String {
        value.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
    }

    /// Writes a file next to its final place, flushes and renames it, so a reader (the
    /// node exporter, a CI step) never sees half of it.
    /// Whether an output file (`flag` names it) can be written: its directory exists and
    /// is writable, and the path is not a directory. Throws a `ConfigurationError`.
    public static func checkWritable(_ path: String, flag: String) throws {
        let url = URL(fileURLWithPath: path)
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw ConfigurationError(message: "\(flag) \(path) is a directory; give a file path")
        }
        let directory = url.deletingLastPathComponent().path
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ConfigurationError(message: "\(flag) \(path): the directory \(directory) does not exist")
        }
        guard FileManager.default.isWritableFile(atPath: directory) else {
            throw ConfigurationError(message: "\(flag) \(path): the directory \(directory) is not writable")
        }
    }

    public static func writeAtomically(_ data: Data, to path: String) throws {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).tmp-\(UUID().uuidString)")
        do {
            try data.write(to: temporary)
            let handle = try FileHandle(forWritingTo: temporary)
            try handle.synchronize()
            try handle.close()
            guard rename(temporary.path, url.path) == 0 else {
                throw StoreError.io(path: path, reason: CacheDirectory.errnoText())
            }
        } catch let error as StoreError {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw StoreError.io(path: path, reason: CacheDirectory.reason(error))
        }
    }

    /// Appends to a file (the GitHub step summary is appended to, not replaced).
    public static func append(_ text: String, to path: String) throws {
        guard let handle = FileHandle(forWritingAtPath: path) ?? {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            return FileHandle(forWritingAtPath: path)
        }() else {
            throw StoreError.io(path: path, reason: "cannot open for appending")
        }
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
    }
}

#if canImport(Glibc)
#endif
