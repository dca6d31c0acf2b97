import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Accesses recorded by `lookup` between runs: one line per access appended to
/// `<cache>/access.journal` (`<unix milliseconds>\t<entry key>`), so a lookup never
/// rewrites `metadata.json` nor waits for a running warm-up. The next run or prune
/// merges the journal into the metadata under the lock and empties it after saving;
/// merging twice is harmless (the latest time wins).
public struct AccessJournal: Sendable {
    public static let fileName = "access.journal"
    public let directory: CacheDirectory

    public init(directory: CacheDirectory) {
        self.directory = directory
    }

    var url: URL { directory.root.appendingPathComponent(Self.fileName) }

    /// Appends one access. A single `write` with O_APPEND, so concurrent lookups never
    /// interleave within a line.
    public func record(_ key: String, at date: Date = Date()) throws {
        guard !key.contains("\n") else { return }
        let line = "\(Int64(date.timeIntervalSince1970 * 1000))\t\(key)\n"
        let fd = open(url.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw StoreError.io(path: url.path, reason: CacheDirectory.errnoText()) }
        defer { close(fd) }
        let written = line.utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count - 1) }
        if written < 0 { throw StoreError.io(path: url.path, reason: CacheDirectory.errnoText()) }
    }

    /// Applies the journal to `metadata` (later access times only). Returns how many
    /// lines applied. Unreadable lines are skipped.
    @discardableResult
    public func merge(into metadata: inout CacheMetadata) -> Int {
        guard let data = FileManager.default.contents(atPath: url.path) else { return 0 }
        var applied = 0
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: "\t", maxSplits: 1)
            guard parts.count == 2, let milliseconds = Int64(parts[0]) else { continue }
            let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            let key = String(parts[1])
            if let entry = metadata.entries[key], entry.lastAccess < date {
                metadata.entries[key]?.lastAccess = date
                applied += 1
            }
        }
        return applied
    }

    /// Empties the journal; call after the merged metadata is saved.
    public func clear() throws {
        try directory.remove(Self.fileName)
    }
}
